"""What a repository configures, read and checked: rule files (which paths a rule governs,
its panel, protocol and thresholds), personas, protocols' files, templates, declared
providers, the ADR tools' conventions its decision records follow (cascade.config.adr_*);
each file kind's schema declared once (cascade.config.schema), a bad value one line naming
the file and the line."""
