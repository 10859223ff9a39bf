"""``python -m contactbench view RUN --rrd OUT.rrd``: a recorded run as a Rerun recording
(see :mod:`contactbench.viewer`)."""

from __future__ import annotations

import argparse
import sys

from .errors import ContactbenchError
from .viewer import export_rerun


def main(argv: "list[str] | None" = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m contactbench")
    commands = parser.add_subparsers(dest="command", required=True)
    view = commands.add_parser("view", help="write a run folder as a Rerun recording (.rrd)")
    view.add_argument("run", help="a run folder, OUT/<scenario>/<solver> of `contactbench run --out OUT`")
    view.add_argument("--rrd", required=True, help="the recording to write (.rrd)")
    view.add_argument("--force", action="store_true", help="replace an existing file")
    args = parser.parse_args(argv)
    try:
        written = export_rerun(args.run, args.rrd, force=args.force)
    except (ContactbenchError, FileExistsError, ImportError) as error:
        print(f"python -m contactbench: {error}", file=sys.stderr)
        return 1
    print(
        f"{written['path']}: {written['steps']} steps, {written['objects']} objects, "
        f"{written['contacts']} contacts; open it with `rerun {written['path']}`"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
