# The pause a consumer group's other member sees when one member restarts,
# static (group.instance.id, KIP-345) or dynamic, through confluent-kafka
# (librdkafka). One process: a paced producer and two consumers, a and b,
# polled in turn. Once both hold partitions, the producer runs steadily for a
# while; then b is closed and a new b (the same group.instance.id when
# static) subscribes, and the run goes on until the new b holds partitions
# and a while after. Prints one JSON line: a's longest gap between two
# deliveries and its worst end-to-end latency before the restart and from it
# on, whether a was revoked and how long it held nothing, and how long b was
# away (close to the new b's assignment). Times on CLOCK_MONOTONIC, in
# milliseconds; each message carries its send time.
#
# Used by bench/kafka-static-restart.ts:
#   python3 kafka-static-restart.py <broker> <topic> <group> <static|dynamic> <rate> <seconds>
import json
import struct
import sys
import time

from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient, NewTopic

PARTITIONS = 4
# Bound on every wait: a member that never gets partitions ends the run instead of hanging it.
TIMEOUT_S = 120


def now() -> float:
    return time.clock_gettime(time.CLOCK_MONOTONIC)


class Member:
    def __init__(self, broker, group, topic, instance):
        config = {
            'bootstrap.servers': broker,
            'group.id': group,
            'session.timeout.ms': 10000,
            'heartbeat.interval.ms': 500,
            'auto.offset.reset': 'latest',
        }
        if instance is not None:
            config['group.instance.id'] = instance
        self.consumer = Consumer(config)
        self.deliveries = []
        # Each delivery's end-to-end latency, by its send time (the producer stamps it).
        self.latencies = []
        # Rebalance callbacks that changed what the member holds: (time, 'revoke' or 'assign').
        self.changes = []

        def changed(kind):
            return lambda _consumer, parts: self.changes.append((now(), kind)) if parts else None

        self.consumer.subscribe([topic], on_assign=changed('assign'), on_revoke=changed('revoke'))

    def poll(self):
        message = self.consumer.poll(0.005)
        if message is not None and message.error() is None:
            arrived = now()
            self.deliveries.append(arrived)
            self.latencies.append((struct.unpack('>d', message.value()[:8])[0], arrived))

    def holds(self):
        return len(self.consumer.assignment()) > 0


def unassigned_ms(changes, start):
    """How long the member held nothing from start on: each revoke until the assignment after it."""
    total, revoked = 0.0, None
    for at, kind in changes:
        if at < start:
            continue
        if kind == 'revoke':
            revoked = at
        elif revoked is not None:
            total, revoked = total + at - revoked, None
    return total * 1000


def worst_latency_ms(latencies, start, end):
    return max((arrived - sent for sent, arrived in latencies if start <= sent <= end), default=float('nan')) * 1000


def longest_gap(times, start, end):
    inside = [t for t in times if start <= t <= end]
    return max((b - a for a, b in zip(inside, inside[1:])), default=float('nan')) * 1000


def main(broker, topic, group, kind, rate, seconds):
    admin = AdminClient({'bootstrap.servers': broker})
    for future in admin.create_topics([NewTopic(topic, PARTITIONS, 1)]).values():
        future.result(TIMEOUT_S)
    producer = Producer({'bootstrap.servers': broker, 'acks': 'all', 'linger.ms': 0})
    static = kind == 'static'
    a = Member(broker, group, topic, 'a' if static else None)
    b = Member(broker, group, topic, 'b' if static else None)
    started = now()
    sent = 0

    def step(members):
        nonlocal sent
        due = int((now() - started) * rate)
        while sent < due:
            producer.produce(topic, struct.pack('>d', now()) + b'x' * 92)
            sent += 1
        producer.poll(0)
        for member in members:
            member.poll()

    def run_until(members, done):
        deadline = now() + TIMEOUT_S
        while not done():
            if now() > deadline:
                raise TimeoutError('no outcome within the bound')
            step(members)

    run_until([a, b], lambda: a.holds() and b.holds())
    steady_from = now()
    run_until([a, b], lambda: now() - steady_from > seconds)
    restart = now()
    b.consumer.close()
    again = Member(broker, group, topic, 'b' if static else None)
    run_until([a, again], lambda: again.holds() and a.holds())
    back = now()
    run_until([a, again], lambda: now() - back > seconds)
    end = now()
    outcome = {
        'steadyGapMs': longest_gap(a.deliveries, steady_from, restart),
        'pauseMs': longest_gap(a.deliveries, restart, end),
        'aRevoked': any(at >= restart and kind == 'revoke' for at, kind in a.changes),
        'aRevokes': len([at for at, kind in a.changes if at >= restart and kind == 'revoke']),
        'aUnassignedMs': unassigned_ms(a.changes, restart),
        'steadyWorstLatencyMs': worst_latency_ms(a.latencies, steady_from, restart),
        'restartWorstLatencyMs': worst_latency_ms(a.latencies, restart, end),
        'bAwayMs': (back - restart) * 1000,
        'aDelivered': len([t for t in a.deliveries if t >= restart]),
    }
    a.consumer.close()
    again.consumer.close()
    producer.flush(TIMEOUT_S)
    print(json.dumps(outcome))


if __name__ == '__main__':
    main(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), float(sys.argv[6]))
