# End-to-end latency through a Kafka broker with confluent-kafka (librdkafka),
# producer and consumer in two processes (one Python process would share its
# interpreter lock between the paced sender and the poll loop, and measure that).
# Both stamp CLOCK_MONOTONIC, which every process on the machine shares.
#
# Used by bench/kafka-gateway-fetch.ts:
#   python3 kafka-confluent-e2e.py consume <broker> <topic> <group> <count>
#       prints "warm" once the first message arrived, then one latency in
#       microseconds per stamped message, then "done"
#   python3 kafka-confluent-e2e.py produce <broker> <topic> <count> <rate>
#       sends one unstamped warm-up message when count is 0, else count stamped
#       messages at rate per second on an absolute schedule, acks=all, linger.ms=0
import sys
import time

from confluent_kafka import Consumer, Producer

# Bound on the whole run: a lost message ends it instead of hanging it.
DEADLINE_S = 300


def now() -> float:
    return time.clock_gettime(time.CLOCK_MONOTONIC)


def consume(broker: str, topic: str, group: str, count: int) -> None:
    consumer = Consumer({
        'bootstrap.servers': broker,
        'group.id': group,
        'auto.offset.reset': 'earliest',
    })
    consumer.subscribe([topic])
    received = 0
    warm = False
    deadline = now() + DEADLINE_S
    while received < count and now() < deadline:
        message = consumer.poll(0.5)
        if message is None or message.error() is not None:
            continue
        arrived = now()
        value = message.value()
        if value.startswith(b't:'):
            print(int((arrived - float(value[2:].decode())) * 1e6), flush=False)
            received += 1
        elif not warm:
            warm = True
            print('warm', flush=True)
    print('done', flush=True)
    consumer.close()


def produce(broker: str, topic: str, count: int, rate: int) -> None:
    producer = Producer({'bootstrap.servers': broker, 'acks': 'all', 'linger.ms': 0})
    if count == 0:
        producer.produce(topic, b'warm-up')
    start = now()
    for index in range(count):
        wait = start + index / rate - now()
        if wait > 0:
            time.sleep(wait)
        producer.produce(topic, ('t:%.6f' % now()).encode())
        producer.poll(0)
    if producer.flush(DEADLINE_S) != 0:
        sys.exit('messages left unsent')


if __name__ == '__main__':
    mode = sys.argv[1]
    if mode == 'consume':
        consume(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]))
    else:
        produce(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
