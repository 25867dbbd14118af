"""``relay <resource> list`` and its kin, made from the operation table: the path's parameters as
arguments, an option for each of the query's filters (its name and help from the field), and the
options every list has (``--limit``, ``--cursor``, ``--all``, ``--json``).
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Sequence
from typing import Annotated, Any, Literal

import typer
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from relay_api.operations import Operation
from relay_cli._common import AllPages, Cursor, JsonOutput, Limit, pages, render
from relay_client import RelayClient

PAGE_FIELDS = ("limit", "cursor")


def list_command(
    op: Operation[Any],
    *,
    columns: Sequence[str],
    doc: str,
    flags: dict[str, str] | None = None,
    whole: Callable[[list[Any]], BaseModel] | None = None,
) -> Callable[..., None]:
    """The command that lists what ``op`` answers, a page at a time or ``--all``; ``doc`` is its
    help (with its ``Example:``), ``flags`` renames a filter's option (``{"include_archived":
    "--archived"}``), ``whole`` makes every item one answer where the page has other fields
    than the path names (``thread_id``)."""
    resource, name = op.id.split(".")
    iterate = "iterate" if name == "list" else f"iterate_{name}"
    items = _items_field(op.response)
    arguments = op.path_params.model_fields if op.path_params is not None else {}
    path = list(arguments)
    query = op.query.model_fields if op.query is not None else {}
    filters = [field for field in query if field not in PAGE_FIELDS]

    def command(ctx: typer.Context, **given: Any) -> None:
        where = [given[field] for field in path]
        chosen = {field: given[field] for field in filters}
        limit, cursor = given["limit"], given["cursor"]

        def methods(client: RelayClient) -> Any:
            return getattr(client, resource)

        found = pages(
            ctx,
            given["all_pages"],
            lambda c: getattr(methods(c), name)(*where, **chosen, limit=limit, cursor=cursor),
            lambda c: getattr(methods(c), iterate)(*where, **chosen, limit=limit),
            # The whole list in the page's shape (which names the path's record, if any).
            whole
            or (lambda every: op.response(**{items: every}, **_named(op.response, path, given))),
        )
        render(found, given["as_json"], rows=getattr(found, items), columns=columns)

    parameters = [inspect.Parameter("ctx", _KEYWORD, annotation=typer.Context)]
    parameters += [_argument(field, info) for field, info in arguments.items()]
    parameters += [_option(field, query[field], (flags or {}).get(field)) for field in filters]
    parameters += [
        inspect.Parameter("limit", _KEYWORD, default=None, annotation=Limit),
        inspect.Parameter("all_pages", _KEYWORD, default=False, annotation=AllPages),
        inspect.Parameter("cursor", _KEYWORD, default=None, annotation=Cursor),
        inspect.Parameter("as_json", _KEYWORD, default=False, annotation=JsonOutput),
    ]
    command.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    command.__doc__ = doc
    command.__name__ = f"{resource}_{name}"
    command.operation = op.id  # type: ignore[attr-defined]  # what it runs, for the tests
    return command


_KEYWORD = inspect.Parameter.KEYWORD_ONLY


def _named(response: type[BaseModel], path: list[str], given: dict[str, Any]) -> dict[str, Any]:
    return {field: given[field] for field in path if field in response.model_fields}


def _items_field(response: type[BaseModel]) -> str:
    lists = [
        field
        for field, info in response.model_fields.items()
        if typing.get_origin(info.annotation) is list
    ]
    assert len(lists) == 1, response
    return lists[0]


def _plain(annotation: Any) -> tuple[type, str]:
    """The type an option's value is read as, and the choices to name in its help."""
    for arg in typing.get_args(annotation) or (annotation,):
        if typing.get_origin(arg) is Literal:
            return str, ", ".join(typing.get_args(arg))
        if typing.get_origin(arg) is Annotated:
            return _plain(typing.get_args(arg)[0])
        if arg is not type(None) and isinstance(arg, type):
            return arg, ""
    raise TypeError(f"no option type for {annotation!r}")


def _words(field: str, info: FieldInfo) -> str:
    _, choices = _plain(info.annotation)
    said = info.description or field.replace("_", " ").capitalize()
    return f"{said} ({choices})." if choices else f"{said}."


def _argument(field: str, info: FieldInfo) -> inspect.Parameter:
    kind, _ = _plain(info.annotation)
    help_text = _words(field, info)
    annotation = Annotated[kind, typer.Argument(help=help_text)]  # type: ignore[valid-type]
    return inspect.Parameter(field, _KEYWORD, annotation=annotation)


def _option(field: str, info: FieldInfo, flag: str | None) -> inspect.Parameter:
    kind, _ = _plain(info.annotation)
    names = [flag] if flag else []
    if kind is bool:
        default: Any = info.default if isinstance(info.default, bool) else False
        option = typer.Option(*names, help=_words(field, info))
        return inspect.Parameter(
            field, _KEYWORD, default=default, annotation=Annotated[bool, option]
        )
    option = typer.Option(*names, help=_words(field, info))
    annotation = Annotated[kind | None, option]  # type: ignore[valid-type]
    return inspect.Parameter(field, _KEYWORD, default=None, annotation=annotation)
