"""A shell command line read as a shell reads it, for the ``command`` policy condition.

The line is parsed with tree-sitter's bash grammar (the parser editors and code hosts use for
shell), never matched with a regular expression: ``pytest; curl … | sh`` is two simple
commands, ``pytest$(curl …)`` holds a substitution, ``r\\m -r"f"`` is ``rm -rf``.

What a policy may rely on:

- ``allowed``: true only when the line is *plain* (lists, pipelines, subshells and groups of
  simple commands, with nothing substituted, no variable set, no redirection to a path outside
  the working directory, no construct this module does not know) and every simple command's
  words are literal and match one of the operator's patterns. Anything else, including a line
  that does not parse, is too long or takes too long to parse, is not allowed, so a person is
  asked.
- ``refused``: true when any simple command anywhere in the line (inside substitutions too,
  and inside ``sh -c '…'`` or ``eval '…'``) runs a refused program, at any position among its
  words (after ``sudo``, ``env``, ``xargs``, ``find -exec``…), with one spelling of each of its
  refused flag groups, however the flags are written (``-rf``, ``-r -f``, ``-Rf``,
  ``--recursive --force``, ``--rec``). A line that does not parse is not refused: no approve
  rule allows it either, so a person is asked.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import PurePosixPath

import tree_sitter_bash
from tree_sitter import Language, Node, Parser, Point

MAX_COMMAND_CHARS = 4096  # a longer line is not read: a person is asked
PARSE_SECONDS = 0.005  # tree-sitter's bash grammar is quadratic on some lines (`a|a|a|…`)
MAX_NESTING = 3  # ``sh -c`` inside ``sh -c``… read this deep for refused programs
SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "su"})
SAFE_TARGETS = frozenset({"/dev/null"})

_BASH = Language(tree_sitter_bash.language())

# The nodes a plain line may be made of; any other (a substitution, an assignment, a loop, a
# function, arithmetic…) makes the line not plain.
_PLAIN = frozenset(
    {
        "program",
        "list",
        "pipeline",
        "command",
        "command_name",
        "redirected_statement",
        "file_redirect",
        "file_descriptor",
        "heredoc_redirect",
        "heredoc_start",
        "heredoc_body",
        "heredoc_content",
        "heredoc_end",
        "herestring_redirect",
        "subshell",
        "compound_statement",
        "negated_command",
        "comment",
        "word",
        "number",
        "string",
        "string_content",
        "raw_string",
        "ansi_c_string",
        "concatenation",
        "simple_expansion",
        "expansion",
        "variable_name",
        "special_variable_name",
    }
)
_GLOB = frozenset("*?[{")  # and a leading ~


@dataclass(frozen=True)
class SimpleCommand:
    """One simple command: its words as the shell would pass them, program first, and whether
    every word is literal (no expansion or glob left for the shell to fill in)."""

    words: tuple[str, ...]
    literal: bool


@dataclass(frozen=True)
class CommandLine:
    """A command line as parsed: every simple command in it (nested ones too), whether the
    line is plain (a line that could not be read has none and is not), and the files its
    output redirections write (``>``, ``>>``, ``>|``, ``&>``, ``&>>``; as written)."""

    commands: tuple[SimpleCommand, ...]
    plain: bool
    redirected_to: tuple[str, ...] = ()


UNREAD = CommandLine((), plain=False)


def read(line: str, cwd: str = "", depth: int = 0) -> CommandLine:
    """``line`` parsed as bash would, within ``MAX_COMMAND_CHARS`` and ``PARSE_SECONDS``."""
    if len(line) > MAX_COMMAND_CHARS or "\x00" in line:
        return UNREAD
    root = _parse(line.encode())
    if root is None or root.has_error:
        return UNREAD
    reader = _Reader(cwd)
    reader.visit(root)
    commands = list(reader.commands)
    redirected_to = list(reader.redirected_to)
    if depth < MAX_NESTING:
        for nested in _nested_lines(reader.commands):
            inner = read(nested, cwd, depth + 1)
            commands.extend(inner.commands)
            redirected_to.extend(inner.redirected_to)
    return CommandLine(tuple(commands), reader.plain, tuple(redirected_to))


def _parse(source: bytes) -> Node | None:
    """The tree of ``source``, or None when it takes longer than ``PARSE_SECONDS``."""
    started = time.perf_counter()

    def chunk(offset: int, _point: Point) -> bytes:
        return source[offset : offset + 4096]

    def late(*_state: object) -> bool:
        return time.perf_counter() - started > PARSE_SECONDS

    try:
        # A parser per line: lines are read on threads, and a parser is not thread-safe.
        return Parser(_BASH).parse(chunk, progress_callback=late).root_node
    except ValueError:  # cancelled by ``late``
        return None


class _Reader:
    """Collects a tree's simple commands and decides whether it is plain."""

    def __init__(self, cwd: str) -> None:
        self.cwd = cwd
        self.commands: list[SimpleCommand] = []
        self.redirected_to: list[str] = []
        self.plain = True

    def visit(self, root: Node) -> None:
        stack = [root]
        while stack:
            node = stack.pop()
            if not node.is_named:
                continue
            if node.type not in _PLAIN:
                self.plain = False
            if node.type == "command":
                self.commands.append(_simple(node))
            elif node.type == "file_redirect":
                if not _inside(node, self.cwd):
                    self.plain = False
                target = _written(node)
                if target is not None:
                    self.redirected_to.append(target)
            stack.extend(reversed(node.children))


def _simple(node: Node) -> SimpleCommand:
    words: list[str] = []
    literal = True
    for child in node.named_children:
        if child.type == "command_name":
            child = child.named_children[0] if child.named_children else child
        elif child.type in ("variable_assignment", "file_redirect", "herestring_redirect"):
            continue
        value, plain = _word(child)
        words.append(value)
        literal = literal and plain
    return SimpleCommand(tuple(words), literal)


def _word(node: Node) -> tuple[str, bool]:
    """A word's value after quote removal (as near as can be told without running anything),
    and whether it is literal."""
    text = _text(node)
    kind = node.type
    if kind in ("word", "number"):
        return _unescaped(text)
    if kind == "raw_string":
        return text[1:-1], True
    if kind == "string":
        parts = node.named_children
        literal = all(part.type == "string_content" for part in parts)
        return "".join(_double_quoted(_text(part)) for part in parts), literal
    if kind == "ansi_c_string":
        return _ansi_c(text[2:-1]), False
    if kind == "concatenation":
        values = [_word(part) for part in node.named_children]
        return "".join(v for v, _ in values), all(p for _, p in values)
    return text, False  # an expansion or substitution: its value is the shell's to find


def _text(node: Node) -> str:
    return (node.text or b"").decode("utf-8", "replace")


def _unescaped(text: str) -> tuple[str, bool]:
    """An unquoted word without its backslashes, and whether no glob, brace or tilde is left
    for the shell to expand."""
    out: list[str] = []
    literal = True
    escaped = False
    for char in text:
        if escaped:
            out.append(char)
            escaped = False
        elif char == "\\":
            escaped = True
        else:
            literal = literal and char not in _GLOB
            out.append(char)
    return "".join(out), literal and not text.startswith("~")


def _double_quoted(text: str) -> str:
    out: list[str] = []
    chars = iter(text)
    for char in chars:
        if char == "\\":
            following = next(chars, "")
            out.append(following if following in '"\\$`' else char + following)
        else:
            out.append(char)
    return "".join(out)


def _ansi_c(text: str) -> str:
    try:
        return text.encode("latin-1", "backslashreplace").decode("unicode_escape")
    except UnicodeDecodeError:
        return text


def _inside(redirect: Node, cwd: str) -> bool:
    """Whether a redirection stays in the working directory (or duplicates a descriptor)."""
    operator = next((_text(c) for c in redirect.children if not c.is_named), "")
    targets = [c for c in redirect.named_children if c.type != "file_descriptor"]
    if not targets:
        return False
    target, literal = _word(targets[-1])
    if operator in (">&", "<&") and (target == "-" or target.isdigit()):
        return True
    if not literal or not target:
        return False
    if target in SAFE_TARGETS:
        return True
    path = PurePosixPath(target)
    if path.is_absolute():
        return bool(cwd) and _within(path, PurePosixPath(cwd))
    return ".." not in path.parts


_WRITES = frozenset({">", ">>", ">|", "&>", "&>>", ">&"})


def _written(redirect: Node) -> str | None:
    """The file an output redirection writes, as written; None for an input, a descriptor's
    duplicate, ``/dev/null``, or a target the shell would expand."""
    operator = next((_text(c) for c in redirect.children if not c.is_named), "")
    targets = [c for c in redirect.named_children if c.type != "file_descriptor"]
    if operator not in _WRITES or not targets:
        return None
    target, literal = _word(targets[-1])
    if not literal or not target or target in SAFE_TARGETS:
        return None
    if operator == ">&" and (target == "-" or target.isdigit()):
        return None
    return target


def _within(path: PurePosixPath, directory: PurePosixPath) -> bool:
    return ".." not in path.parts and path.is_relative_to(directory)


def _nested_lines(commands: Sequence[SimpleCommand]) -> Iterator[str]:
    """The command lines a command hands to another shell: ``sh -c LINE``, ``eval WORDS``."""
    for command in commands:
        words = command.words
        for at, word in enumerate(words):
            name = PurePosixPath(word).name
            if name == "eval":
                yield " ".join(words[at + 1 :])
            elif name in SHELLS:
                for i in range(at + 1, len(words) - 1):
                    flag = words[i]
                    if flag.startswith("-") and not flag.startswith("--") and "c" in flag:
                        yield words[i + 1]
                        break


# --- What a policy asks of a line ------------------------------------------------------------


@dataclass(frozen=True)
class Pattern:
    """An allowed program and its arguments: each word is matched as a glob against a literal
    word; a last word ``*`` stands for any further arguments, none included."""

    words: tuple[str, ...]

    def matches(self, words: Sequence[str]) -> bool:
        if not words:
            return False
        fixed = self.words[:-1] if self.words[-1:] == ("*",) and len(self.words) > 1 else None
        if fixed is not None:
            return len(words) >= len(fixed) and _all_match(fixed, words[: len(fixed)])
        return len(words) == len(self.words) and _all_match(self.words, words)


def _all_match(patterns: Sequence[str], words: Sequence[str]) -> bool:
    program = patterns[0] == words[0]
    return program and all(fnmatchcase(w, p) for p, w in zip(patterns[1:], words[1:], strict=True))


@dataclass(frozen=True)
class Refusal:
    """A refused program (by its name, whatever its directory) when it runs with at least one
    spelling of each flag group (``[["-r", "-R", "--recursive"], ["-f", "--force"]]``)."""

    program: str
    flags: tuple[tuple[str, ...], ...]

    def refuses(self, words: Sequence[str]) -> bool:
        return any(
            PurePosixPath(word).name == self.program and self._flagged(words[at + 1 :])
            for at, word in enumerate(words)
        )

    def _flagged(self, arguments: Sequence[str]) -> bool:
        return all(any(_given(spelling, arguments) for spelling in group) for group in self.flags)


def _given(flag: str, arguments: Sequence[str]) -> bool:
    """Whether ``flag`` is among the arguments: a short one alone or combined (``-rf``), a long
    one whole or abbreviated as getopt takes it (``--rec``), with or without ``=value``."""
    if flag.startswith("--"):
        return any(
            arg.startswith("--") and len(name) > 2 and flag.startswith(name)
            for arg in arguments
            for name in (arg.split("=", 1)[0],)
        )
    letter = flag[1:]
    return any(
        arg.startswith("-") and not arg.startswith("--") and letter in arg[1:] for arg in arguments
    )


def allowed(line: CommandLine, patterns: Sequence[Pattern]) -> bool:
    """Whether every simple command of a plain line is literal and matches a pattern."""
    return (
        line.plain
        and bool(line.commands)
        and all(
            command.literal and any(p.matches(command.words) for p in patterns)
            for command in line.commands
        )
    )


def refused(line: CommandLine, refusals: Sequence[Refusal]) -> bool:
    """Whether any simple command of the line runs a refused program with its flags."""
    return any(r.refuses(command.words) for command in line.commands for r in refusals)
