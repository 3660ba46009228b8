"""What a step and the clocks' placement cost across real network stacks: the harness of hosts (tests/hosts.py,
docs/truth-devices.md "Many hosts"), N client hosts on one bridge, their ranks launched by Open MPI over ssh,
running bench_clients.py; once over the bare veth links and once with every host's link shaped by tbf.

    python tests/bench/bench_hosts_steps.py [--clients 4] [--steps 1000] [--rate 20e6]

As root, where the harness can be built (its tools and namespaces)."""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
import hosts  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument("--steps", type=int, default=1000)
    ap.add_argument("--rate", type=float, default=20e6, help="the shaped links' rate, bytes a second")
    a = ap.parse_args()
    why = hosts.missing()
    if why:
        sys.exit(f"the harness of hosts {why}")
    with tempfile.TemporaryDirectory(dir="/var/tmp") as d, hosts.Hosts(Path(d) / "h", a.clients) as h:
        for label in ("bare veth links", f"each host's link shaped by tbf to {a.rate / 1e6:g} MB/s"):
            if label.startswith("each"):
                for host in h.hosts[1:]:
                    h.shape(host, a.rate)
            done = subprocess.run([*h.mpirun(), sys.executable, str(HERE / "bench_clients.py"), str(a.steps)],
                                  capture_output=True, text=True, timeout=900)
            print(f"{a.clients} hosts, {label}:")
            print(done.stdout.strip() or done.stderr[-2000:])


if __name__ == "__main__":
    main()
