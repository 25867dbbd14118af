"""A2A 1.0's errors as its JSON-RPC binding answers them: each with the code the specification
gives it (§5.4, JSON-RPC's own for the protocol's errors) and the reason a ``google.rpc.ErrorInfo``
names it by (§9.5: the error's name in upper snake case, without "Error")."""

from __future__ import annotations

from typing import ClassVar


class A2AError(Exception):
    """An error the binding answers with, in place of a result."""

    code: ClassVar[int]
    reason: ClassVar[str]

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class ParseError(A2AError):
    code, reason = -32700, "PARSE_ERROR"


class InvalidRequestError(A2AError):
    code, reason = -32600, "INVALID_REQUEST"


class MethodNotFoundError(A2AError):
    code, reason = -32601, "METHOD_NOT_FOUND"


class InvalidParamsError(A2AError):
    code, reason = -32602, "INVALID_PARAMS"


class TaskNotFoundError(A2AError):
    code, reason = -32001, "TASK_NOT_FOUND"


class TaskNotCancelableError(A2AError):
    code, reason = -32002, "TASK_NOT_CANCELABLE"


class UnsupportedOperationError(A2AError):
    code, reason = -32004, "UNSUPPORTED_OPERATION"


class VersionNotSupportedError(A2AError):
    code, reason = -32009, "VERSION_NOT_SUPPORTED"
