// A tiny service used only by the adapter's tests. Our contracts have no
// client-streaming call, so the test service is described here, as the
// FileDescriptorProto a protobuf compiler would produce, and loaded through
// protobuf-es exactly like generated code.
import { create, createFileRegistry, type Message } from '@bufbuild/protobuf';
import type { GenMessage, GenService } from '@bufbuild/protobuf/codegenv2';
import {
  FieldDescriptorProto_Label,
  FieldDescriptorProto_Type,
  FileDescriptorProtoSchema,
  type FieldDescriptorProto,
} from '@bufbuild/protobuf/wkt';

export type EchoRequest = Message<'ledgerline.test.v1.EchoRequest'> & {
  text: string;
  /** The handler waits this long (or until cancelled) before answering. */
  delayMs: number;
  /** When set, the handler fails with this reason. */
  failReason: string;
  /** How many responses a streaming handler sends. */
  count: number;
  padding: Uint8Array;
};

export type EchoResponse = Message<'ledgerline.test.v1.EchoResponse'> & {
  text: string;
  index: number;
};

function field(name: string, number: number, type: FieldDescriptorProto_Type, jsonName: string) {
  return {
    name,
    number,
    type,
    jsonName,
    label: FieldDescriptorProto_Label.OPTIONAL,
  } satisfies Partial<FieldDescriptorProto>;
}

const file = create(FileDescriptorProtoSchema, {
  name: 'ledgerline/test/v1/test.proto',
  package: 'ledgerline.test.v1',
  syntax: 'proto3',
  messageType: [
    {
      name: 'EchoRequest',
      field: [
        field('text', 1, FieldDescriptorProto_Type.STRING, 'text'),
        field('delay_ms', 2, FieldDescriptorProto_Type.INT32, 'delayMs'),
        field('fail_reason', 3, FieldDescriptorProto_Type.STRING, 'failReason'),
        field('count', 4, FieldDescriptorProto_Type.INT32, 'count'),
        field('padding', 5, FieldDescriptorProto_Type.BYTES, 'padding'),
      ],
    },
    {
      name: 'EchoResponse',
      field: [
        field('text', 1, FieldDescriptorProto_Type.STRING, 'text'),
        field('index', 2, FieldDescriptorProto_Type.INT32, 'index'),
      ],
    },
  ],
  service: [
    {
      name: 'TestService',
      method: [
        method('Echo', false, false),
        method('Repeat', false, true),
        method('Collect', true, false),
        method('Chat', true, true),
      ],
    },
  ],
});

function method(name: string, clientStreaming: boolean, serverStreaming: boolean) {
  return {
    name,
    inputType: '.ledgerline.test.v1.EchoRequest',
    outputType: '.ledgerline.test.v1.EchoResponse',
    clientStreaming,
    serverStreaming,
  };
}

const registry = createFileRegistry(file, () => undefined);

function required<T>(value: T | undefined, name: string): T {
  if (value === undefined) throw new Error(`the test descriptor lacks ${name}`);
  return value;
}

export const EchoRequestSchema = required(
  registry.getMessage('ledgerline.test.v1.EchoRequest'),
  'EchoRequest',
) as unknown as GenMessage<EchoRequest>;

export const EchoResponseSchema = required(
  registry.getMessage('ledgerline.test.v1.EchoResponse'),
  'EchoResponse',
) as unknown as GenMessage<EchoResponse>;

export const TestService = required(
  registry.getService('ledgerline.test.v1.TestService'),
  'TestService',
) as unknown as GenService<{
  echo: { methodKind: 'unary'; input: typeof EchoRequestSchema; output: typeof EchoResponseSchema };
  repeat: { methodKind: 'server_streaming'; input: typeof EchoRequestSchema; output: typeof EchoResponseSchema };
  collect: { methodKind: 'client_streaming'; input: typeof EchoRequestSchema; output: typeof EchoResponseSchema };
  chat: { methodKind: 'bidi_streaming'; input: typeof EchoRequestSchema; output: typeof EchoResponseSchema };
}>;
