// A client for grpc.reflection.v1.ServerReflection, for tests: the service is
// described here as the FileDescriptorProto protoc would produce for the parts
// of reflection.proto the tests use, and called through our own adapter.
import { create, createFileRegistry, fromBinary, type Message } from '@bufbuild/protobuf';
import type { GenMessage, GenService } from '@bufbuild/protobuf/codegenv2';
import {
  FieldDescriptorProto_Label as Label,
  FieldDescriptorProto_Type as Type,
  FileDescriptorProtoSchema,
  type FileDescriptorProto,
} from '@bufbuild/protobuf/wkt';
import { closeClient, createClient } from '@ledgerline/rpc';

type Request = Message<'grpc.reflection.v1.ServerReflectionRequest'> & {
  host: string;
  messageRequest:
    | { case: 'fileContainingSymbol'; value: string }
    | { case: 'listServices'; value: string }
    | { case: undefined; value?: undefined };
};
type Response = Message<'grpc.reflection.v1.ServerReflectionResponse'> & {
  messageResponse:
    | { case: 'fileDescriptorResponse'; value: { fileDescriptorProto: Uint8Array[] } }
    | { case: 'listServicesResponse'; value: { service: { name: string }[] } }
    | { case: 'errorResponse'; value: { errorCode: number; errorMessage: string } }
    | { case: undefined; value?: undefined };
};

const pkg = '.grpc.reflection.v1.';
function field(name: string, number: number, type: Type, extra: { typeName?: string; oneofIndex?: number } = {}) {
  const jsonName = name.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
  return { name, number, type, jsonName, label: Label.OPTIONAL, ...extra };
}

const file = create(FileDescriptorProtoSchema, {
  name: 'grpc/reflection/v1/reflection.proto',
  package: 'grpc.reflection.v1',
  syntax: 'proto3',
  messageType: [
    {
      name: 'ServerReflectionRequest',
      oneofDecl: [{ name: 'message_request' }],
      field: [
        field('host', 1, Type.STRING),
        field('file_containing_symbol', 4, Type.STRING, { oneofIndex: 0 }),
        field('list_services', 7, Type.STRING, { oneofIndex: 0 }),
      ],
    },
    {
      name: 'ServerReflectionResponse',
      oneofDecl: [{ name: 'message_response' }],
      field: [
        field('file_descriptor_response', 4, Type.MESSAGE, { typeName: `${pkg}FileDescriptorResponse`, oneofIndex: 0 }),
        field('list_services_response', 6, Type.MESSAGE, { typeName: `${pkg}ListServiceResponse`, oneofIndex: 0 }),
        field('error_response', 7, Type.MESSAGE, { typeName: `${pkg}ErrorResponse`, oneofIndex: 0 }),
      ],
    },
    {
      name: 'FileDescriptorResponse',
      field: [{ ...field('file_descriptor_proto', 1, Type.BYTES), label: Label.REPEATED }],
    },
    {
      name: 'ListServiceResponse',
      field: [{ ...field('service', 1, Type.MESSAGE, { typeName: `${pkg}ServiceResponse` }), label: Label.REPEATED }],
    },
    { name: 'ServiceResponse', field: [field('name', 1, Type.STRING)] },
    { name: 'ErrorResponse', field: [field('error_code', 1, Type.INT32), field('error_message', 2, Type.STRING)] },
  ],
  service: [
    {
      name: 'ServerReflection',
      method: [
        {
          name: 'ServerReflectionInfo',
          inputType: `${pkg}ServerReflectionRequest`,
          outputType: `${pkg}ServerReflectionResponse`,
          clientStreaming: true,
          serverStreaming: true,
        },
      ],
    },
  ],
});

const registry = createFileRegistry(file, () => undefined);
const ReflectionService = registry.getService('grpc.reflection.v1.ServerReflection') as unknown as GenService<{
  serverReflectionInfo: {
    methodKind: 'bidi_streaming';
    input: GenMessage<Request>;
    output: GenMessage<Response>;
  };
}>;

async function ask(address: string, request: Request['messageRequest']): Promise<Response['messageResponse']> {
  const client = createClient(ReflectionService, address);
  try {
    async function* one() {
      yield { messageRequest: request };
    }
    for await (const response of client.serverReflectionInfo(one(), { deadlineMs: 5000 }))
      return response.messageResponse;
    throw new Error('the reflection stream ended without an answer');
  } finally {
    closeClient(client);
  }
}

/** The service names the server's reflection lists. */
export async function listServices(address: string): Promise<string[]> {
  const answer = await ask(address, { case: 'listServices', value: '*' });
  if (answer.case !== 'listServicesResponse') throw new Error(`unexpected reflection answer ${answer.case}`);
  return answer.value.service.map((s) => s.name).sort();
}

/** The file descriptors (the file and its imports) that define `symbol`. */
export async function fileContainingSymbol(address: string, symbol: string): Promise<FileDescriptorProto[]> {
  const answer = await ask(address, { case: 'fileContainingSymbol', value: symbol });
  if (answer.case !== 'fileDescriptorResponse') throw new Error(`unexpected reflection answer ${answer.case}`);
  return answer.value.fileDescriptorProto.map((bytes) => fromBinary(FileDescriptorProtoSchema, bytes));
}
