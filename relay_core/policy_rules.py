"""How a policy matches an approval, compiled once per policy version, and the process's book of
the enabled ones in the order they are tried.

Every part of a policy's ``match`` was validated when the policy was stored (its regular
expressions compile in RE2, its pointers are RFC 6901, its timezone exists), so matching never
fails: a value of another type than a condition expects simply does not match it.

Matching an approval's text (its title, its payload) is *screened* off the event loop, in a
thread, before the transaction that stores the approval: RE2 is linear but a 64 KB payload
against a large pattern still takes tens of milliseconds, and the shell parser of the
``command`` condition a few more. The transaction then only checks kinds, agents, hours and
limits against the screen; a policy it meets that the screen did not (changed in between) makes
no policy decide: the operator does.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import re
import shlex
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from relay_api import models as m
from relay_core import shell_commands
from relay_core.hub import Hub
from relay_core.ports import UnitOfWork

log = logging.getLogger("relay.policies")

POLICIES = "policies"  # published when a policy changes: every process forgets its book
BOOK_SECONDS = 5.0  # a book is read again after this long even without a hint (hints can be lost)
MAX_ENABLED = 10_000

_MISSING = object()
# Text matching runs on the event loop up to this much work (``Rule.work``: RE2 instructions
# times characters, ~50 ns each at worst when RE2 falls back from its DFA), a few milliseconds;
# past it, on a thread. A thread hop under load cost an approval request with 100 title
# policies 2.3 ms of CPU against 0.5 without (bench/figures.md).
INLINE_WORK = 100_000
PARSE_WORK = 200  # a shell line's character, in those units (tree-sitter and the walk)
SET_PROGRAM = 5_000  # RE2 instructions of the title patterns matched as one set at most


def pointer_tokens(pointer: str) -> tuple[str, ...]:
    """An RFC 6901 pointer's reference tokens (``/a~1b/0`` → ``("a/b", "0")``)."""
    if not pointer:
        return ()
    return tuple(t.replace("~1", "/").replace("~0", "~") for t in pointer[1:].split("/"))


def resolve(document: Any, tokens: Sequence[str]) -> Any:
    """The value the tokens name in ``document``, or ``_MISSING``."""
    for token in tokens:
        if isinstance(document, dict) and token in document:
            document = document[token]
        elif (
            isinstance(document, list)
            and re.fullmatch(r"0|[1-9][0-9]*", token)
            and int(token) < len(document)
        ):
            document = document[int(token)]
        else:
            return _MISSING
    return document


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _same(a: Any, b: Any) -> bool:
    """JSON equality: ``true`` is not ``1``."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    return bool(a == b)


@dataclass(frozen=True)
class CommandTest:
    """A ``command`` condition, ready to test against a line read by ``shell_commands``."""

    allow: tuple[shell_commands.Pattern, ...]
    refuse: tuple[shell_commands.Refusal, ...]

    @classmethod
    def of(cls, given: dict[str, Any]) -> CommandTest:
        allow = tuple(
            shell_commands.Pattern(tuple(shlex.split(p))) for p in given.get("allow") or ()
        )
        refuse = tuple(
            shell_commands.Refusal(r["program"], tuple(tuple(g) for g in r.get("flags", ())))
            for r in given.get("refuse") or ()
        )
        return cls(allow, refuse)

    def holds(self, line: shell_commands.CommandLine) -> bool:
        if self.allow:
            return shell_commands.allowed(line, self.allow)
        return shell_commands.refused(line, self.refuse)


@dataclass(frozen=True)
class Condition:
    """One payload condition, ready to test."""

    tokens: tuple[str, ...]
    op: str
    operand: Any

    def holds(self, payload: Any, facts: Facts) -> bool:
        value = resolve(payload, self.tokens)
        if self.op == "exists":
            return (value is not _MISSING) is bool(self.operand)
        if value is _MISSING:
            return False
        if self.op == "eq":
            return _same(value, self.operand)
        if self.op == "in":
            return any(_same(value, option) for option in self.operand)
        if self.op == "regex":
            return isinstance(value, str) and self.operand.search(value) is not None
        if self.op == "command":
            return isinstance(value, str) and bool(self.operand.holds(facts.command_line(value)))
        if not _number(value):
            return False
        return bool(value < self.operand if self.op == "lt" else value > self.operand)


def _condition(pointer: str, given: dict[str, Any]) -> Condition:
    [(op, operand)] = given.items()
    if op == "regex":
        operand = m.linear_pattern(operand)
    elif op == "command":
        operand = CommandTest.of(operand)
    return Condition(pointer_tokens(pointer), op, operand)


def glob_matches(pattern: str, text: str) -> bool:
    """Whether ``text`` matches ``pattern``, where ``*`` stands for any characters: each part
    between stars found leftmost in turn, which is exact for such globs and never backtracks."""
    if "*" not in pattern:
        return pattern == text
    if pattern.endswith("*") and pattern.count("*") == 1:  # the usual shape: ci-*
        return text.startswith(pattern[:-1])
    head, *middle, tail = pattern.split("*")
    if len(head) + len(tail) > len(text) or not text.startswith(head) or not text.endswith(tail):
        return False
    at, end = len(head), len(text) - len(tail)
    for part in middle:
        found = text.find(part, at, end)
        if found < 0:
            return False
        at = found + len(part)
    return True


def _minutes(clock: str) -> int:
    hours, minutes = clock.split(":")
    return int(hours) * 60 + int(minutes)


@dataclass(frozen=True)
class Facts:
    """What a policy looks at in an approval (a command line is parsed once for all rules)."""

    kind: str
    agent_id: str
    title: str
    payload: dict[str, Any] | None
    options: frozenset[str] = frozenset()  # a question's labels
    multiple: bool = False  # a question that takes several
    _lines: dict[str, shell_commands.CommandLine] = field(default_factory=dict, compare=False)

    def command_line(self, text: str) -> shell_commands.CommandLine:
        """``text`` read as a shell line, in the payload's ``cwd`` when it names one."""
        line = self._lines.get(text)
        if line is None:
            cwd = (self.payload or {}).get("cwd")
            line = shell_commands.read(text, cwd if isinstance(cwd, str) else "")
            self._lines[text] = line
        return line


UNSCREENED = "it changed while the approval was read"
# Decisions from the most cautious: at one priority, a policy that rejects is tried first.
CAUTION = ("reject", "ask", "answer", "approve")
NO_TITLE = "the title does not match"
Key = tuple[int, int]  # a rule's policy id and version


@dataclass(frozen=True)
class Screen:
    """What an approval's text made of a book's rules: for each rule it saw, why its text
    conditions fail, or None when they hold. A rule of a title alone is answered from
    ``titled`` (the set's one pass), the others were asked one by one (``checked``)."""

    seen: frozenset[Key]
    titled: frozenset[Key]
    checked: dict[Key, str | None]

    def saw(self, rule: Rule) -> bool:
        return rule.key in self.seen

    def why(self, rule: Rule) -> str | None:
        key = rule.key
        if key not in self.seen:
            return UNSCREENED
        if key in self.checked:
            return self.checked[key]
        if rule.title is None:
            return None  # no text condition
        return None if key in self.titled else NO_TITLE


@dataclass(frozen=True)
class Rule:
    """One enabled policy version, compiled."""

    policy: m.Policy
    kinds: frozenset[str] | None
    agents: tuple[str, ...] | None
    title: Any  # an RE2 pattern
    payload: tuple[Condition, ...]
    hours: tuple[int, int, ZoneInfo] | None
    title_size: int = 0  # the title pattern's RE2 instructions
    # Why a policy stored by an earlier version cannot be compiled now (a pattern RE2 refuses):
    # it decides nothing, and nothing after it does either: the operator decides.
    broken: str | None = None

    @classmethod
    def of(cls, policy: m.Policy) -> Rule:
        """The policy, compiled (its match was validated when it was stored); a match this
        version refuses makes a broken rule."""
        try:
            return cls._compiled(policy)
        except ValueError as exc:
            log.warning(
                "policy %s cannot be evaluated (%s): no approval is decided by a policy until it"
                " is replaced or disabled",
                policy.policy_id,
                str(exc).splitlines()[-1].strip(),
            )
            why = f"policy {policy.policy_id} cannot be evaluated: replace or disable it"
            return cls(policy, None, None, None, (), None, broken=why)

    @classmethod
    def _compiled(cls, policy: m.Policy) -> Rule:
        match = m.ApprovalMatch.model_validate(policy.match)
        title = m.linear_pattern(match.title) if match.title is not None else None
        hours = None
        if match.hours is not None:
            window = match.hours
            hours = (_minutes(window.from_), _minutes(window.to), ZoneInfo(window.timezone))
        return cls(
            policy=policy,
            kinds=frozenset(match.kinds) if match.kinds is not None else None,
            agents=tuple(match.agents) if match.agents is not None else None,
            title=title,
            title_size=title.programsize if title is not None else 0,
            payload=tuple(
                _condition(pointer, condition.model_dump(by_alias=True, exclude_unset=True))
                for pointer, condition in (match.payload or {}).items()
            ),
            hours=hours,
        )

    @property
    def order(self) -> tuple[int, int, int]:
        """Higher priority first, then the more cautious decision (``CAUTION``), then the older
        policy."""
        policy = self.policy
        return (-policy.priority, CAUTION.index(policy.decision), policy.policy_id)

    @functools.cached_property
    def key(self) -> Key:
        """(policy id, version): what a screen knows the rule by (read for every rule of
        every approval: made once)."""
        return (self.policy.policy_id, self.policy.version)

    def work(self, facts: Facts) -> int:
        """About how much matching ``facts``' payload may take, at worst: each pattern's RE2
        instructions times the characters it reads, a command line's characters times
        ``PARSE_WORK`` (titles: ``TitleSet.size``)."""
        work = 0
        for condition in self.payload:
            value = resolve(facts.payload or {}, condition.tokens)
            if isinstance(value, str) and condition.op == "regex":
                work += condition.operand.programsize * len(value)
            elif isinstance(value, str) and condition.op == "command":
                work += PARSE_WORK * len(value)
        return work

    def text_mismatch(self, facts: Facts, titled: frozenset[Key] | None) -> str | None:
        """Why the approval's title or payload does not match, or None when they do (the rules
        whose title holds, ``titled``, found at once by ``TitleSet``, else by this rule's own
        pattern): the slow part, run by ``screen``."""
        if self.broken is not None:
            return self.broken
        if self.title is not None:
            holds = self.key in titled if titled is not None else self.title.search(facts.title)
            if not holds:
                return NO_TITLE
        for condition in self.payload:
            if not condition.holds(facts.payload or {}, facts):
                return f"the payload's /{'/'.join(condition.tokens)} fails its {condition.op}"
        return None

    def mismatch(self, facts: Facts, at: datetime, screen: Screen) -> str | None:
        """Why the approval does not match, or None when it does; its text as ``screen`` found
        it (a rule the screen never saw does not match)."""
        # The screen first: one look-up, and most policies fail on their text.
        why = screen.why(self)
        if why is not None:
            return why
        if self.kinds is not None and facts.kind not in self.kinds:
            return f"kind {facts.kind} is not among {sorted(self.kinds)}"
        why = self.undecidable(facts)
        if why is not None:
            return why
        if self.agents is not None and not _any_glob(self.agents, facts.agent_id):
            return f"agent {facts.agent_id} matches none of its agents"
        if self.hours is not None and not _within(self.hours, at):
            return "outside its hours"
        return None

    def undecidable(self, facts: Facts) -> str | None:
        """Why the rule's decision cannot be this approval's, or None when it can: a question
        is answered, not approved; only a question is answered, with labels it offers."""
        decision, answer = self.policy.decision, self.policy.answer or []
        if facts.kind == "question" and decision == "approve":
            return "it approves, and a question is answered, not approved"
        if decision != "answer":
            return None
        if facts.kind != "question":
            return "it answers questions"
        if not facts.options.issuperset(answer):
            return "its answer is not among the question's options"
        if len(answer) > 1 and not facts.multiple:
            return "its answer is several options, and the question takes one"
        return None


def _any_glob(patterns: tuple[str, ...], text: str) -> bool:
    for pattern in patterns:  # a loop, not any() over a generator: every rule, every approval
        if glob_matches(pattern, text):
            return True
    return False


def _within(hours: tuple[int, int, ZoneInfo], at: datetime) -> bool:
    """Whether ``at`` falls in the window of minutes ``hours`` gives in its timezone."""
    start, end, zone = hours
    local = at.astimezone(zone)
    now = local.hour * 60 + local.minute
    if start == end:
        return True  # from and to the same minute: all day
    if start < end:
        return start <= now < end
    return now >= start or now < end  # across midnight


class TitleSet:
    """The title patterns of a book's rules in one RE2 set: one pass over a title finds every
    rule whose title holds, where a search a rule cost ~2 µs each (100 policies with titles
    made an approval request 3.4 times dearer; docs/performance.md, "Figures behind the
    code"). Past ``SET_PROGRAM`` instructions in all, each rule searches on its own."""

    def __init__(self, rules: Sequence[Rule]) -> None:
        titled = [rule for rule in rules if rule.title is not None and rule.broken is None]
        self._keys = [rule.key for rule in titled]
        self.seen = frozenset(rule.key for rule in rules)
        # Asked one by one even with the set: those with payload conditions, and broken ones.
        self.one_by_one = [rule for rule in rules if rule.payload or rule.broken is not None]
        self._matcher: Any = None
        self.size = sum(rule.title_size for rule in titled)  # RE2 instructions in all
        if titled and self.size <= SET_PROGRAM:
            self._matcher = m.linear_set([rule.title.pattern for rule in titled])

    def holding(self, title: str) -> frozenset[Key] | None:
        """The keys of the rules whose title pattern finds ``title``; None when the set was
        not made (each rule is then asked)."""
        if self._matcher is None:
            return None
        return frozenset(self._keys[index] for index in self._matcher.Match(title) or ())


# A service's ``read``: runs a function in a read-only unit of work.
Reader = Callable[[Callable[[UnitOfWork], Awaitable[list[Rule]]]], Awaitable[list[Rule]]]


class Rulebook:
    """The enabled policies of this process, compiled and in order; read again when a policy
    changes (on any instance: the change's hint) or after ``BOOK_SECONDS``."""

    def __init__(self, hub: Hub) -> None:
        self._rules: list[Rule] | None = None
        self._titles = TitleSet(())
        self._read_at = 0.0
        self._generation = 0
        hub.watch(POLICIES, self.forget)

    def forget(self) -> None:
        """Read the policies again at the next approval."""
        self._rules = None
        self._generation += 1

    async def screen(self, read: Reader, facts: Facts) -> Screen:
        """Which enabled rules' text conditions hold for ``facts``: at once when the work is
        small, else on a thread (``INLINE_WORK``)."""
        rules = self._fresh()
        if rules is None:  # an empty book is fresh too: no read for it
            rules = await read(self.rules)
        titles = self._titles if rules is self._rules else TitleSet(rules)

        def screened() -> Screen:
            titled = titles.holding(facts.title)
            one_by_one = titles.one_by_one if titled is not None else rules
            checked = {rule.key: rule.text_mismatch(facts, titled) for rule in one_by_one}
            return Screen(titles.seen, titled or frozenset(), checked)

        work = titles.size * len(facts.title)
        work += sum(rule.work(facts) for rule in rules if rule.payload)
        if work <= INLINE_WORK:
            return screened()
        return await asyncio.to_thread(screened)

    def _fresh(self) -> list[Rule] | None:
        """The book, unless it is due to be read again."""
        if self._rules is not None and time.monotonic() - self._read_at < BOOK_SECONDS:
            return self._rules
        return None

    async def rules(self, uow: UnitOfWork) -> list[Rule]:
        """The enabled policies, in the order they are tried."""
        if (fresh := self._fresh()) is not None:
            return fresh
        generation = self._generation
        enabled = await uow.policies.enabled(MAX_ENABLED)
        rules = sorted((Rule.of(policy) for policy in enabled), key=lambda rule: rule.order)
        if generation == self._generation:  # no change was heard while reading
            self._rules, self._read_at = rules, time.monotonic()
            self._titles = TitleSet(rules)
        return rules
