import { toBinary, type DescFile, type DescService } from '@bufbuild/protobuf';
import { FileDescriptorProtoSchema } from '@bufbuild/protobuf/wkt';
import { ReflectionService } from '@grpc/reflection';
import { service as healthService } from 'grpc-health-check';

/** The package definition @grpc/reflection reads: only each entry's fileDescriptorProtos matter to it. */
type PackageDefinition = ConstructorParameters<typeof ReflectionService>[0];

export const HEALTH_SERVICE_NAME = 'grpc.health.v1.Health';

function withDependencies(files: Iterable<DescFile>): DescFile[] {
  const seen = new Map<string, DescFile>();
  const visit = (file: DescFile): void => {
    if (seen.has(file.name)) return;
    seen.set(file.name, file);
    file.dependencies.forEach(visit);
  };
  for (const file of files) visit(file);
  return [...seen.values()];
}

function encode(file: DescFile): Buffer {
  const bytes = toBinary(FileDescriptorProtoSchema, file.proto);
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/**
 * Server reflection (v1 and v1alpha) for protobuf-es services. @grpc/reflection
 * expects a proto-loader package definition, but it only reads the serialized
 * FileDescriptorProtos in it, which protobuf-es provides for every generated
 * file; the health service's descriptor comes from grpc-health-check.
 */
export function createReflection(services: readonly DescService[]): ReflectionService {
  const files = withDependencies(services.map((service) => service.file));
  const definition: PackageDefinition = {
    [HEALTH_SERVICE_NAME]: healthService.Check!.requestType,
  };
  for (const file of files) {
    definition[`${file.name}#descriptor`] = {
      format: 'Protocol Buffer 3 DescriptorProto',
      type: {},
      fileDescriptorProtos: [encode(file)],
    };
  }
  return new ReflectionService(definition, {
    services: [...services.map((service) => service.typeName), HEALTH_SERVICE_NAME],
  });
}
