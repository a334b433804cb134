"""Consumer groups through confluent-kafka (Debian's python3-confluent-kafka,
librdkafka), driven by the group specs: one scenario per run, its outcome out
as one JSON line. Every consumer of a run is polled from this one thread in
turn (as librdkafka's own test 0102 interleaves its consumers), and each
records its rebalance callbacks in order: ["assign", [partitions]] and
["revoke", [partitions]]. Each run first creates its topic with 4 partitions;
partitions are their numbers.

  static-restart <broker> <topic> <group> <static|dynamic>
      two members a and b (range), each with group.instance.id when static;
      once both hold partitions, b is closed and a new b (same instance id)
      subscribes; ends when the new b holds partitions and a holds partitions
      again. Prints every member's events, b's assignment before and after.
  cooperative <broker> <topic> <group>
      a alone (cooperative-sticky) takes every partition; then b joins; ends
      when both hold partitions. Prints both members' events and assignments.
"""
import json
import sys
import time

from confluent_kafka import Consumer
from confluent_kafka.admin import AdminClient, NewTopic

# A bound on every wait, so a gateway that stops answering fails the run instead of hanging it.
TIMEOUT_S = 60
POLL_S = 0.05
# Partitions of the topic each run creates.
PARTITIONS = 4


class Member:
    def __init__(self, name, broker, group, extra):
        self.name = name
        self.events = []
        config = {
            'bootstrap.servers': broker,
            'group.id': group,
            'client.id': name,
            'session.timeout.ms': 10000,
            'heartbeat.interval.ms': 500,
            'auto.offset.reset': 'earliest',
        }
        config.update(extra)
        self.consumer = Consumer(config)

    def subscribe(self, topic):
        def on_assign(_consumer, partitions):
            self.events.append(['assign', sorted(p.partition for p in partitions)])

        def on_revoke(_consumer, partitions):
            self.events.append(['revoke', sorted(p.partition for p in partitions)])

        self.consumer.subscribe([topic], on_assign=on_assign, on_revoke=on_revoke)

    def poll(self):
        message = self.consumer.poll(POLL_S)
        if message is not None and message.error() is not None and message.error().fatal():
            raise RuntimeError(f'{self.name}: {message.error().str()}')

    def assignment(self):
        return sorted(p.partition for p in self.consumer.assignment())


def poll_until(members, done):
    deadline = time.monotonic() + TIMEOUT_S
    while not done():
        if time.monotonic() > deadline:
            states = {m.name: [m.assignment(), m.events] for m in members}
            raise TimeoutError(f'no outcome within {TIMEOUT_S} s: {json.dumps(states)}')
        for member in members:
            member.poll()


def static_restart(broker, topic, group, kind):
    static = kind == 'static'
    extra = lambda name: {'group.instance.id': name} if static else {}
    a = Member('a', broker, group, extra('a'))
    b = Member('b', broker, group, extra('b'))
    a.subscribe(topic)
    b.subscribe(topic)
    poll_until([a, b], lambda: a.assignment() and b.assignment())
    before = b.assignment()
    # a's events until now: the group's first generations (a may be alone in the first, with the gateway's
    # initial rebalance delay at 0), which say nothing of the restart.
    a_before = len(a.events)
    b.consumer.close()
    again = Member('b', broker, group, extra('b'))
    again.subscribe(topic)
    # A rebalance would revoke a's partitions before the new b could be given any (eager: range).
    poll_until([a, again], lambda: again.assignment() and a.assignment())
    outcome = {
        'a': list(a.events[a_before:]),
        'aBeforeRestart': list(a.events[:a_before]),
        'b': list(b.events),
        'restarted': list(again.events),
        'before': before,
        'after': again.assignment(),
        'aHolds': a.assignment(),
    }
    a.consumer.close()
    again.consumer.close()
    return outcome


def cooperative(broker, topic, group, partitions):
    extra = {'partition.assignment.strategy': 'cooperative-sticky'}
    a = Member('a', broker, group, extra)
    a.subscribe(topic)
    poll_until([a], lambda: len(a.assignment()) == partitions)
    b = Member('b', broker, group, extra)
    b.subscribe(topic)
    poll_until([a, b], lambda: b.assignment() and len(a.assignment()) + len(b.assignment()) == partitions)
    outcome = {'a': list(a.events), 'b': list(b.events), 'aHolds': a.assignment(), 'bHolds': b.assignment()}
    a.consumer.close()
    b.consumer.close()
    return outcome


def create_topic(broker, topic, partitions):
    admin = AdminClient({'bootstrap.servers': broker})
    for future in admin.create_topics([NewTopic(topic, partitions, 1)]).values():
        future.result(TIMEOUT_S)


def main(argv):
    command = argv[0]
    create_topic(argv[1], argv[2], PARTITIONS)
    if command == 'static-restart':
        outcome = static_restart(argv[1], argv[2], argv[3], argv[4])
    elif command == 'cooperative':
        outcome = cooperative(argv[1], argv[2], argv[3], PARTITIONS)
    else:
        raise SystemExit(f'unknown command {command}')
    print(json.dumps(outcome))


if __name__ == '__main__':
    main(sys.argv[1:])
