import { ErrorReason, LedgerlineError } from '@ledgerline/errors';
import { CertificateFiles } from '@ledgerline/security';
import type { Logger } from '@ledgerline/service-kit';
import type { KafkaGatewaySettings } from './settings.js';

/** The TLS settings every service has (ServiceConfig's): what the Kafka listener's files default to. */
export interface ServiceTlsFiles {
  readonly tlsCert?: string | undefined;
  readonly tlsKey?: string | undefined;
  readonly tlsCa?: string | undefined;
}

/** The Kafka listener's certificate files, read and checked, and whether a client certificate is required. */
export interface ListenerTls {
  readonly files: CertificateFiles;
  readonly requireClientCert: boolean;
}

/**
 * The gateway settings with the Kafka listener's TLS files defaulted to the
 * service's own certificate when neither Kafka file is set: a host that
 * serves gRPC over TLS serves Kafka over TLS too, so SASL passwords (tokens)
 * never cross the network in clear by omission. One Kafka file given is
 * never completed from the service's (both or neither, checked at start).
 */
export function withServiceTlsDefaults(config: KafkaGatewaySettings & ServiceTlsFiles): KafkaGatewaySettings {
  const own = config.kafkaTlsCertFile !== undefined || config.kafkaTlsKeyFile !== undefined;
  const serviceHasPair = config.tlsCert !== undefined && config.tlsKey !== undefined;
  const certFile = own ? config.kafkaTlsCertFile : serviceHasPair ? config.tlsCert : undefined;
  const keyFile = own ? config.kafkaTlsKeyFile : serviceHasPair ? config.tlsKey : undefined;
  const caFile = config.kafkaTlsCaFile ?? (certFile === undefined ? undefined : config.tlsCa);
  return {
    ...config,
    ...(certFile === undefined ? {} : { kafkaTlsCertFile: certFile }),
    ...(keyFile === undefined ? {} : { kafkaTlsKeyFile: keyFile }),
    ...(caFile === undefined ? {} : { kafkaTlsCaFile: caFile }),
  };
}

function invalidSettings(message: string): LedgerlineError {
  return new LedgerlineError('INVALID_ARGUMENT', ErrorReason.INVALID_CONFIG, message);
}

/** Throws INVALID_CONFIG for settings that do not make one TLS listener; true when TLS is on. */
function checkCombination(settings: KafkaGatewaySettings): boolean {
  const { kafkaTlsCertFile: certFile, kafkaTlsKeyFile: keyFile, kafkaTlsCaFile: caFile } = settings;
  if ((certFile === undefined) !== (keyFile === undefined)) {
    throw invalidSettings(
      'the Kafka listener takes a TLS certificate and its key together: set both kafkaTlsCertFile and ' +
        'kafkaTlsKeyFile (LEDGERLINE_KAFKA_TLS_CERT_FILE and LEDGERLINE_KAFKA_TLS_KEY_FILE) or neither',
    );
  }
  if (certFile === undefined) {
    if (caFile !== undefined || settings.kafkaTlsRequireClientCert) {
      throw invalidSettings(
        'kafkaTlsCaFile and kafkaTlsRequireClientCert need a TLS Kafka listener: set kafkaTlsCertFile and kafkaTlsKeyFile',
      );
    }
    return false;
  }
  if (settings.kafkaTlsRequireClientCert && caFile === undefined) {
    throw invalidSettings(
      'kafkaTlsRequireClientCert needs kafkaTlsCaFile, the CA that Kafka client certificates are checked against',
    );
  }
  return true;
}

/**
 * Reads and checks the Kafka listener's TLS files, or undefined for a plain
 * TCP listener. A missing, unreadable or mismatched file fails here, at
 * start-up, naming the files; afterwards they are read again every
 * reloadIntervalMs so a rotated certificate reaches new connections.
 */
export function openListenerTls(
  settings: KafkaGatewaySettings,
  reloadIntervalMs: number,
  logger: Logger,
): ListenerTls | undefined {
  if (!checkCombination(settings)) return undefined;
  const certFile = settings.kafkaTlsCertFile as string;
  const keyFile = settings.kafkaTlsKeyFile as string;
  const caFile = settings.kafkaTlsCaFile;
  try {
    const files = new CertificateFiles(
      { certFile, keyFile, ...(caFile === undefined ? {} : { caFile }) },
      {
        reloadIntervalMs,
        onReload: (paths) => logger.info({ files: paths }, 'Kafka listener TLS certificates reloaded'),
        onReloadFailed: (error) =>
          logger.warn(
            { err: error },
            'Kafka listener TLS files changed but cannot be used yet; keeping the previous ones',
          ),
      },
    );
    return { files, requireClientCert: settings.kafkaTlsRequireClientCert };
  } catch (error) {
    if (!(error instanceof LedgerlineError)) throw error;
    const named = `kafkaTlsCertFile ${certFile}, kafkaTlsKeyFile ${keyFile}${caFile === undefined ? '' : `, kafkaTlsCaFile ${caFile}`}`;
    throw new LedgerlineError(error.code, error.reason, `the Kafka listener's TLS files (${named}): ${error.message}`, {
      details: error.details,
      cause: error,
    });
  }
}
