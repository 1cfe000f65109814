"""``python3 -m iqstream_client``: the ``iqstream`` command line under its older name."""

import sys

from iqstream.__main__ import main

if __name__ == "__main__":
    sys.exit(main(prog="python3 -m iqstream_client"))
