"""Demo options: the generic ``DemoConfig`` and its one parser, built from the demo table's schemas
(``contract.demos``).

Standard library only: the CLI and the job supervisor build a demo's
command line from :class:`DemoConfig` and validate options with :func:`parse_args`; the demo process
(``python -m zbench.demos <demo> ... --events X``) parses its argv with the same parser. Running a
demo (start, phases, result, errors) is the harness's job (``zbench.demos.adapter``).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Any

from zbench.contract import demos as registry
from zbench.contract.demos import Demo, Opt
from zbench.contract.options import UsageError, UsageParser, argparse_kwargs
from zbench.textfit import plural


@dataclass(frozen=True)
class DemoConfig:
    """A demo run's options, every one resolved to its value (the schema's order). Options read as
    attributes (``config.board``). Quacks like ``RunConfig`` where jobs need it (workload,
    framework, mode, gpus, device)."""

    demo: str
    options: tuple[tuple[str, Any], ...]

    kind = "demo"
    framework = "demo"
    precision = None
    gpus = 1

    @classmethod
    def of(cls, demo: str, **options: Any) -> DemoConfig:
        """The demo's defaults with ``options`` over them (unknown names: ``UsageError``), as the
        run uses them (``--smoke``'s caps applied: ``Demo.resolve``)."""
        entry = registry.get(demo)
        values = entry.defaults()
        unknown = sorted(set(options) - set(values))
        if unknown:
            raise UsageError(
                f"{demo}: unknown {plural(len(unknown), 'option')} {', '.join(unknown)}"
            )
        values.update(options)
        return cls(demo, tuple(entry.resolve(values).items()))

    def check(self) -> str | None:
        """What the demo would refuse at once, in one line (None: nothing found): ``of`` and the
        parser validated each option; the entry module's own check sees its inputs (a model to
        animate, a video to track), so every way of submitting refuses them before queueing."""
        return registry.check(self.entry, self.as_options())

    def __getattr__(self, name: str) -> Any:
        for key, value in object.__getattribute__(self, "options"):
            if key == name:
                return value
        raise AttributeError(name)

    @property
    def entry(self) -> Demo:
        return registry.get(self.demo)

    def as_options(self) -> dict[str, Any]:
        return dict(self.options)

    @property
    def workload(self) -> str:
        return self.demo

    @property
    def mode(self) -> str:
        return self.entry.mode(self.as_options())

    def to_argv(self, events: str | None = None) -> list[str]:
        """The argv after ``python -m zbench.demos`` (``--events`` after the demo's name)."""
        argv = [self.demo, *(["--events", events] if events is not None else [])]
        by_name = {o.name: o for o in self.entry.options}
        for name, value in self.options:
            opt = by_name[name]
            if value == opt.default:
                continue
            if opt.kind == "bool":
                argv.append(opt.flag if value else opt.no_flag)
            elif opt.kind == "switch":
                argv.append("--" + str(value))
            elif value is not None:
                argv += [opt.flag, str(value)]
        return argv

    def as_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"demo": self.demo, **self.as_options()}
        d.update(kind="demo", workload=self.demo, framework="demo", mode=self.mode)
        d["gpus"] = 0 if d.get("device") == "cpu" else 1
        return d

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> DemoConfig:
        demo = str(data.get("demo") or data.get("workload"))
        names = set(registry.get(demo).defaults())
        return cls.of(demo, **{k: v for k, v in data.items() if k in names})


def _add(p: argparse.ArgumentParser, opt: Opt) -> None:
    if opt.kind == "switch":  # --train|--animate: the one kind only demos have
        group = p.add_mutually_exclusive_group()
        for choice in opt.choices:
            group.add_argument(
                "--" + choice,
                dest=opt.name,
                action="store_const",
                const=choice,
                help=f"{opt.help} ({choice})",
            )
        p.set_defaults(**{opt.name: opt.default})
    else:
        p.add_argument(opt.flag, default=opt.default, help=opt.help, **argparse_kwargs(opt))


def build_parser(
    prog: str = "python -m zbench.demos", *, add_help: bool = True
) -> argparse.ArgumentParser:
    """The demos' argument parser: one subcommand per demo, its options from the demo table."""
    p = UsageParser(
        prog=prog,
        description="Run one zbench demo and write runner-protocol events.",
        add_help=add_help,
    )
    sub = p.add_subparsers(dest="demo", required=True, parser_class=UsageParser, metavar="DEMO")
    for entry in registry.demos().values():
        d = sub.add_parser(entry.name, help=entry.title, description=entry.title, add_help=add_help)
        for opt in entry.options:
            _add(d, opt)
        d.add_argument("--events", default=None, help="events file path or fd:N (default: stderr)")
    return p


def parse_args(argv: list[str], *, add_help: bool = False) -> tuple[DemoConfig, str | None]:
    """(config, events target). Raises ``UsageError`` with a one-line reason; ``-h`` prints help
    and exits only with ``add_help`` (the demo process's own command line)."""
    if argv and not argv[0].startswith("-"):
        registry.get(argv[0])  # an unknown demo: name the choices in one line
    ns = vars(build_parser(add_help=add_help).parse_args(argv))
    demo, events = ns.pop("demo"), ns.pop("events")
    return DemoConfig.of(demo, **ns), events


def options_help(entry: Demo) -> str:
    """One line per option, for help texts outside argparse (the CLI's epilog)."""
    lines = []
    for o in entry.options:
        if o.kind == "switch":
            flag = "|".join("--" + c for c in o.choices)
        elif o.kind == "bool":
            flag = f"{o.flag}/{o.no_flag}"
        elif o.kind == "choice":
            flag = f"{o.flag} {'|'.join(o.choices)}"
        else:
            flag = f"{o.flag} {o.kind.upper()}"
        default = "" if o.default in (None, False) else f" (default {o.default})"
        lines.append(f"{flag}: {o.help}{default}")
    return "\n".join(lines)
