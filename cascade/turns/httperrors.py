"""The failures of a request that got no answer, named as httpx names them (ConnectError,
ConnectTimeout, ReadTimeout, RemoteProtocolError, ...): cascade.turns.model describes a
failure by these names and by the OSError or http.client error each is chained to. No
import: a run that asks no model never loads an HTTP module for them.
"""
from __future__ import annotations


class TransportError(Exception):
    """No answer: the connection could not be made, or broke."""


class TimeoutException(TransportError):
    pass


class ConnectTimeout(TimeoutException):
    pass


class ReadTimeout(TimeoutException):
    pass


class WriteTimeout(TimeoutException):
    pass


class ConnectError(TransportError):
    pass


class ProxyError(TransportError):
    pass


class ReadError(TransportError):
    pass


class WriteError(TransportError):
    pass


class RemoteProtocolError(TransportError):
    pass


class UnsupportedProtocol(TransportError):
    pass
