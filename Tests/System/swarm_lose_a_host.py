"""A host of the swarm lost under load (run by deploy/swarm/test.sh, which makes the swarm and says how to lose a
host): deliveries and chats go on through a gateway of a host that stays, one host is lost mid-flow, and afterwards
deliveries still finish, every feed is gapless and every message confirmed to its sender reached its recipient
exactly once."""

import os
import shlex
import subprocess
import time

from conftest import eventually
from traffic import Traffic, pairs_near_campus, verify_feeds

PAIRS = 4


def test_a_host_lost_under_load_loses_no_message_and_the_flows_go_on(system):
    pairs = pairs_near_campus(PAIRS)
    with Traffic(pairs) as traffic:
        assert traffic.wait_for_deliveries(PAIRS, timeout=300), traffic.errors
        before = traffic.deliveries()
        lost_at = time.monotonic()
        subprocess.run(shlex.split(os.environ["SWARM_LOSE_HOST"]), check=True)
        # The swarm starts the lost host's replicas on the others; the flows carry on meanwhile, retrying as an app.
        assert traffic.wait_for_deliveries(2 * PAIRS, timeout=600), traffic.errors
        print(f"\n{before} deliveries before the loss; {traffic.deliveries() - before} after it, "
              f"the first {PAIRS * 2} within {time.monotonic() - lost_at:.0f} s")
    assert traffic.errors == []
    print(subprocess.run(shlex.split(os.environ["SWARM_STATUS"]), capture_output=True, text=True).stdout)
    # Every feed read again through the gateway: what was sent before, during and after the loss, once each.
    assert eventually(lambda: _settled(pairs), timeout=120, interval=2)
    verify_feeds(pairs)
    sent = sum(len(pair.sent) for pair in pairs)
    retried = sum(len(pair.failures) for pair in pairs)
    print(f"{sent} messages confirmed, each arrived once; {retried} requests were tried again")


def _settled(pairs):
    """Every confirmed message is in its recipient's feed (they may still be on their way after the last answer)."""
    for pair in pairs:
        for feed in pair.feeds.values():
            feed.poll()
        for recipient, text in pair.sent:
            if not any(e["type"] == "message.sent" and e["data"]["text"] == text
                       for e in pair.feeds[recipient].entries):
                return False
    return True
