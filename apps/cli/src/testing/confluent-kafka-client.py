"""confluent-kafka (Debian's python3-confluent-kafka: librdkafka, the C client
most Kafka clients wrap) driven by the librdkafka spec: one command per run, the
outcome out as one JSON line.

  init-transactions <broker> <transactional.id>   init_transactions, prints the error's name, whether it is
                                                   fatal and retriable, or null when it succeeded
"""
import json
import sys

from confluent_kafka import KafkaException, Producer

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


COMMANDS = {'init-transactions': init_transactions}

if __name__ == '__main__':
    print(json.dumps(COMMANDS[sys.argv[1]](*sys.argv[2:])))
