"""``python -m neardup.node.export DIR``: write the plugin's data files into DIR."""

from __future__ import annotations

import sys
from pathlib import Path

from . import export

if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python -m neardup.node.export DIRECTORY")
    for path in export(Path(sys.argv[1])):
        print(path)
