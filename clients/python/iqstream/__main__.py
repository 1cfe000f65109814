"""Command line: publish AG-UI events into IQ-Stream (``iqstream``, ``python -m iqstream``, and the older
``python3 -m iqstream_client``: the same program).

  iqstream publish --run RUN [--format ndjson|sse|json] [FILE]
      ndjson (default): one event per line, each sent the moment its line is read
      sse: AG-UI SSE frames piped through as they are read (Content-Type text/event-stream)
      json: one event object or an array of events, in one request
      FILE defaults to standard input, so `my-agent | iqstream publish ...` streams.
  iqstream pipe-agent --run RUN --agent-url URL [--input FILE]
      POSTs a RunAgentInput (FILE, or {} ) to an AG-UI agent and pipes its SSE answer into RUN.
  iqstream status --run RUN
  iqstream delete --run RUN

--url and --token default to $IQSTREAM_URL (else http://127.0.0.1:8080) and $IQSTREAM_TOKEN.
Prints the server's JSON reply; exits 1 on a refusal or failure (message on stderr), 2 on bad usage.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys

from .client import IqStreamClient, IqStreamError


def _open_input(path: str | None):
    if path in (None, "-"):
        return sys.stdin.buffer
    return open(path, "rb")


def main(argv: list[str] | None = None, prog: str = "iqstream") -> int:
    parser = argparse.ArgumentParser(prog=prog, description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", default=os.environ.get("IQSTREAM_URL", "http://127.0.0.1:8080"), help="IQ-Stream base URL")
    parser.add_argument("--token", default=os.environ.get("IQSTREAM_TOKEN"), help="JWT with the publish right")
    sub = parser.add_subparsers(dest="command", required=True)

    publish = sub.add_parser("publish", help="publish events from a file or stdin")
    publish.add_argument("--run", required=True, help="run id")
    publish.add_argument("--format", choices=["ndjson", "sse", "json"], default="ndjson")
    publish.add_argument("file", nargs="?", help="input file (default: stdin)")

    pipe = sub.add_parser("pipe-agent", help="run an AG-UI agent and pipe its SSE answer in")
    pipe.add_argument("--run", required=True)
    pipe.add_argument("--agent-url", required=True)
    pipe.add_argument("--input", help="RunAgentInput JSON file ('-' for stdin; default {})")

    for name in ("status", "delete"):
        p = sub.add_parser(name)
        p.add_argument("--run", required=True)

    args = parser.parse_args(argv)
    client = IqStreamClient(args.url, token=args.token)
    try:
        if args.command == "publish":
            with _open_input(args.file) as source:
                if args.format == "sse":
                    result = client.pipe_sse(args.run, source)
                elif args.format == "json":
                    doc = json.load(source)
                    result = client.publish(args.run, doc if isinstance(doc, list) else [doc])
                else:
                    with client.open_run(args.run) as run:
                        for line in source:
                            if line.strip():
                                run.send(line)
                    result = run.finish()  # finished by the with block: its result
            out = dataclasses.asdict(result)
        elif args.command == "pipe-agent":
            if args.input:
                with _open_input(args.input) as f:
                    run_input = f.read()
            else:
                run_input = b"{}"
            out = dataclasses.asdict(client.pipe_agent(args.run, args.agent_url, run_input))
        elif args.command == "status":
            status = client.status(args.run)
            if status is None:
                print(f"run '{args.run}' not found", file=sys.stderr)
                return 1
            out = dataclasses.asdict(status)
        else:
            client.delete(args.run)
            out = {"deleted": args.run}
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except IqStreamError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
