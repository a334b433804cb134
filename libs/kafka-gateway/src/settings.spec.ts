import { effectiveMaxMessageBytes, MAX_STORED_ENTRY_HEADROOM_BYTES, resolveKafkaGatewaySettings } from './settings.js';

const MiB = 1024 * 1024;

describe('effectiveMaxMessageBytes', () => {
  it("serves Kafka's default message.max.bytes under the default gRPC message size", () => {
    expect(effectiveMaxMessageBytes(resolveKafkaGatewaySettings(), undefined)).toBe(1_048_588);
    expect(effectiveMaxMessageBytes(resolveKafkaGatewaySettings(), 5 * MiB)).toBe(1_048_588);
  });

  it('lowers a limit one gRPC message to the owner would not hold, keeping room for the entry around it', () => {
    const settings = resolveKafkaGatewaySettings({ kafkaMaxMessageBytes: 16 * MiB });
    expect(effectiveMaxMessageBytes(settings, undefined)).toBe(4 * MiB - MAX_STORED_ENTRY_HEADROOM_BYTES);
    expect(effectiveMaxMessageBytes(settings, 5 * MiB)).toBe(5 * MiB - MAX_STORED_ENTRY_HEADROOM_BYTES);
    expect(effectiveMaxMessageBytes(settings, 32 * MiB)).toBe(16 * MiB);
  });
});
