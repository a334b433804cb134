"""kafka-python (Debian's python3-kafka 2.0.2, a pure-Python Kafka client) driven
by the kafka-python spec: one command per run, records out as JSON lines.

  produce <broker> <topic> <count> <compression>   keys k<i>, values v<i>, header src=python
  consume <broker> <topic> <group> <count>         reads up to count records, commits, prints them
  offset-for-time <broker> <topic> <ms>            ListOffsets by timestamp on partition 0
  commit-metadata <broker> <topic> <group> <offset> <metadata>
                                                   commits offset and metadata on partition 0, prints what
                                                   committed(metadata=True) reads back
  create-topic <broker> <topic> <partitions> [name=value ...]
                                                   CreateTopics through KafkaAdminClient, prints the error's name or null
  create-partitions <broker> <topic> <count>       CreatePartitions through KafkaAdminClient, the same
"""
import json
import sys

from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import KafkaAdminClient, NewPartitions, NewTopic
from kafka.errors import KafkaError
from kafka.structs import OffsetAndMetadata

# A bound on every wait, so a gateway that stops answering fails the run instead of hanging it.
TIMEOUT_MS = 15000


def text(value):
    return None if value is None else value.decode('utf-8')


def produce(broker, topic, count, compression):
    producer = KafkaProducer(
        bootstrap_servers=broker,
        compression_type=None if compression == 'none' else compression,
        linger_ms=20,
        request_timeout_ms=TIMEOUT_MS,
    )
    futures = [
        producer.send(topic, key=b'k%d' % i, value=b'v%d' % i, headers=[('src', b'python')]) for i in range(count)
    ]
    producer.flush(timeout=TIMEOUT_MS / 1000)
    for future in futures:
        metadata = future.get(timeout=TIMEOUT_MS / 1000)
        print(json.dumps({'offset': metadata.offset, 'partition': metadata.partition}))
    producer.close()


def consume(broker, topic, group, count):
    consumer = KafkaConsumer(
        topic,
        bootstrap_servers=broker,
        group_id=group,
        auto_offset_reset='earliest',
        enable_auto_commit=False,
        consumer_timeout_ms=TIMEOUT_MS,
    )
    seen = 0
    for record in consumer:
        print(
            json.dumps(
                {
                    'offset': record.offset,
                    'key': text(record.key),
                    'value': text(record.value),
                    'headers': {name: text(value) for name, value in record.headers},
                    'timestamp': record.timestamp,
                }
            )
        )
        seen += 1
        if seen >= count:
            break
    consumer.commit()
    consumer.close()


def offset_for_time(broker, topic, ms):
    consumer = KafkaConsumer(bootstrap_servers=broker, request_timeout_ms=TIMEOUT_MS + 1000)
    partition = TopicPartition(topic, 0)
    found = consumer.offsets_for_times({partition: ms})[partition]
    print(json.dumps({'offset': None if found is None else found.offset}))
    consumer.close()


def commit_metadata(broker, topic, group, offset, metadata):
    consumer = KafkaConsumer(
        bootstrap_servers=broker, group_id=group, enable_auto_commit=False, request_timeout_ms=TIMEOUT_MS + 1000
    )
    partition = TopicPartition(topic, 0)
    consumer.commit({partition: OffsetAndMetadata(offset, metadata)})
    committed = consumer.committed(partition, metadata=True)
    print(json.dumps({'offset': committed.offset, 'metadata': committed.metadata}))
    consumer.close()


def admin_call(broker, call):
    admin = KafkaAdminClient(bootstrap_servers=broker, request_timeout_ms=TIMEOUT_MS)
    try:
        call(admin)
        print(json.dumps({'error': None}))
    except KafkaError as error:
        print(json.dumps({'error': type(error).__name__}))
    finally:
        admin.close()


def create_topic(broker, topic, partitions, configs):
    settings = dict(config.split('=', 1) for config in configs)
    new_topic = NewTopic(topic, num_partitions=partitions, replication_factor=1, topic_configs=settings)
    admin_call(broker, lambda admin: admin.create_topics([new_topic]))


def create_partitions(broker, topic, count):
    admin_call(broker, lambda admin: admin.create_partitions({topic: NewPartitions(count)}))


def main(argv):
    command, broker, topic = argv[1], argv[2], argv[3]
    if command == 'produce':
        produce(broker, topic, int(argv[4]), argv[5])
    elif command == 'consume':
        consume(broker, topic, argv[4], int(argv[5]))
    elif command == 'offset-for-time':
        offset_for_time(broker, topic, int(argv[4]))
    elif command == 'commit-metadata':
        commit_metadata(broker, topic, argv[4], int(argv[5]), argv[6])
    elif command == 'create-topic':
        create_topic(broker, topic, int(argv[4]), argv[5:])
    elif command == 'create-partitions':
        create_partitions(broker, topic, int(argv[4]))
    else:
        sys.exit('unknown command %s' % command)


if __name__ == '__main__':
    main(sys.argv)
