from cascade.main import entry

entry()
