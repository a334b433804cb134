"""confluent-kafka (Debian's python3-confluent-kafka: librdkafka, the C client
most Kafka clients wrap) driven by the librdkafka spec: one command per run, the
outcome out as one JSON line.

  init-transactions <broker> <transactional.id>   init_transactions, prints the error's name, whether it is
                                                   fatal and retriable, or null when it succeeded
  produce-nulls <broker> <topic>                  a tombstone, an empty value, and a value with headers
                                                   [multi=a, single=x, multi=null, multi=''] to partition 0
  consume <broker> <topic> <count>                reads count records of partition 0 from offset 0: value, key
                                                   and headers (null kept apart from empty), a list
  metadata <broker> <topic>                       the topic's metadata (error, partition count) and the Metadata
                                                   request versions librdkafka sent (from its protocol debug log)
"""
import json
import logging
import re
import sys

from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition

# A bound on every wait, so a gateway that stops answering fails the run instead of hanging it.
TIMEOUT_S = 30


def init_transactions(broker, transactional_id):
    producer = Producer({'bootstrap.servers': broker, 'transactional.id': transactional_id})
    try:
        producer.init_transactions(TIMEOUT_S)
        return {'error': None}
    except KafkaException as exception:
        error = exception.args[0]
        return {'error': error.name(), 'fatal': error.fatal(), 'retriable': error.retriable(), 'reason': error.str()}


def produce_nulls(broker, topic):
    producer = Producer({'bootstrap.servers': broker, 'acks': 'all'})
    errors = []

    def delivered(error, _message):
        if error is not None:
            errors.append(error.name())

    producer.produce(topic, value=None, key=b'gone', partition=0, on_delivery=delivered)
    producer.produce(topic, value=b'', key=b'', partition=0, on_delivery=delivered)
    headers = [('multi', b'a'), ('single', b'x'), ('multi', None), ('multi', b'')]
    producer.produce(topic, value=b'v', partition=0, headers=headers, on_delivery=delivered)
    left = producer.flush(TIMEOUT_S)
    return {'errors': errors, 'undelivered': left}


def text(value):
    return None if value is None else value.decode('utf-8')


def consume(broker, topic, count):
    consumer = Consumer({'bootstrap.servers': broker, 'group.id': 'librdkafka-spec', 'enable.auto.commit': False})
    consumer.assign([TopicPartition(topic, 0, 0)])
    records = []
    while len(records) < int(count):
        message = consumer.poll(TIMEOUT_S)
        if message is None:
            break
        if message.error() is not None:
            return {'error': message.error().name(), 'records': records}
        records.append(
            {
                'offset': message.offset(),
                'key': text(message.key()),
                'value': text(message.value()),
                'headers': [[name, text(value)] for name, value in (message.headers() or [])],
            }
        )
    consumer.close()
    return {'records': records}


class Lines(logging.Handler):
    def __init__(self):
        super().__init__()
        self.lines = []

    def emit(self, record):
        self.lines.append(record.getMessage())


def metadata(broker, topic):
    lines = Lines()
    logger = logging.getLogger('librdkafka')
    logger.addHandler(lines)
    logger.setLevel(logging.DEBUG)
    producer = Producer({'bootstrap.servers': broker, 'debug': 'protocol', 'logger': logger})
    found = producer.list_topics(topic, TIMEOUT_S).topics[topic]
    producer.poll(0)
    # librdkafka logs each request it sends as "Sent MetadataRequest (v<n>, ...)".
    versions = sorted({int(v) for line in lines.lines for v in re.findall(r'Sent MetadataRequest \(v(\d+)', line)})
    return {
        'error': None if found.error is None else found.error.name(),
        'partitions': len(found.partitions),
        'metadataVersions': versions,
    }


COMMANDS = {
    'init-transactions': init_transactions,
    'produce-nulls': produce_nulls,
    'consume': consume,
    'metadata': metadata,
}

if __name__ == '__main__':
    print(json.dumps(COMMANDS[sys.argv[1]](*sys.argv[2:])))
