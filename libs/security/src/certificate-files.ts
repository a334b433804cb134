import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createSecureContext, type SecureContextOptions } from 'node:tls';
import type { experimental } from '@grpc/grpc-js';
import { LedgerlineError, unexpectedRejection } from '@ledgerline/errors';
import { SecurityReason } from './security-reason.js';

/** Paths of PEM files: a certificate chain and its key, and the CA bundle that peers are checked against. */
export interface TlsFiles {
  certFile?: string;
  keyFile?: string;
  caFile?: string;
}

/** The bytes of the files at one moment; each set is checked to go together before anyone sees it. */
export interface CertificateSet {
  cert?: Buffer;
  key?: Buffer;
  ca?: Buffer;
}

export interface CertificateFilesOptions {
  /** How often the files are read again to pick up a rotation (Kubernetes swaps mounted secrets in place). */
  reloadIntervalMs: number;
  /** Told of each rotation that was picked up. */
  onReload?: (files: TlsFiles) => void;
  /** Told of a rotation that could not be used (a half-written file, a key that does not match); the old set stays. */
  onReloadFailed?: (error: LedgerlineError) => void;
}

/** The shortest reload interval: reading three small files once a second costs nothing. */
export const MIN_TLS_RELOAD_INTERVAL_MS = 100;

function filesError(message: string, files: TlsFiles, cause?: unknown): LedgerlineError {
  return new LedgerlineError('INVALID_ARGUMENT', SecurityReason.TLS_FILES_INVALID, message, {
    details: Object.fromEntries(Object.entries(files).filter(([, path]) => path !== undefined)),
    ...(cause === undefined ? {} : { cause }),
  });
}

/** Throws a TLS_FILES_INVALID error unless the set parses and the key belongs to the certificate. */
function checkSet(set: CertificateSet, files: TlsFiles): void {
  try {
    createSecureContext(contextOptions(set));
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    throw filesError(
      `the TLS files do not make a usable certificate set (${why}); check that each is PEM and that the key belongs to the certificate`,
      files,
      error,
    );
  }
}

/** Node's secure-context options for a set (no field for a missing file). */
export function contextOptions(set: CertificateSet): SecureContextOptions {
  return {
    ...(set.cert === undefined ? {} : { cert: set.cert }),
    ...(set.key === undefined ? {} : { key: set.key }),
    ...(set.ca === undefined ? {} : { ca: set.ca }),
  };
}

function sameSet(a: CertificateSet, b: CertificateSet): boolean {
  const same = (x?: Buffer, y?: Buffer): boolean =>
    x === undefined ? y === undefined : y !== undefined && x.equals(y);
  return same(a.cert, b.cert) && same(a.key, b.key) && same(a.ca, b.ca);
}

/**
 * A certificate, its key and a CA bundle read from files, read again every
 * reloadIntervalMs so a rotated secret is picked up without a restart. A new
 * set is used only once it parses and its key matches its certificate: a
 * rotation caught half-written keeps the previous set until the next read.
 * It is also a grpc-js certificate provider, so channels present the newest
 * client certificate on every new connection.
 */
export class CertificateFiles implements experimental.CertificateProvider {
  private current: CertificateSet;
  private timer: NodeJS.Timeout | undefined;
  private reading = false;
  private readonly changeListeners = new Set<(set: CertificateSet) => void>();
  private readonly caListeners = new Set<experimental.CaCertificateUpdateListener>();
  private readonly identityListeners = new Set<experimental.IdentityCertificateUpdateListener>();

  /** Reads and checks the files now; a missing or bad file fails here, at start-up, with TLS_FILES_INVALID. */
  constructor(
    readonly files: TlsFiles,
    private readonly options: CertificateFilesOptions,
  ) {
    if ((files.certFile === undefined) !== (files.keyFile === undefined)) {
      throw new LedgerlineError(
        'INVALID_ARGUMENT',
        SecurityReason.TLS_CONFIG_INVALID,
        'a TLS certificate and its key are given together: set both LEDGERLINE_TLS_CERT and LEDGERLINE_TLS_KEY (or --tls-cert and --tls-key)',
      );
    }
    if (!(options.reloadIntervalMs >= MIN_TLS_RELOAD_INTERVAL_MS)) {
      throw new LedgerlineError(
        'INVALID_ARGUMENT',
        SecurityReason.TLS_CONFIG_INVALID,
        `reloadIntervalMs must be at least ${MIN_TLS_RELOAD_INTERVAL_MS}, got ${options.reloadIntervalMs}`,
      );
    }
    this.current = this.readNow();
    checkSet(this.current, files);
  }

  /** The set in use. */
  get set(): CertificateSet {
    return this.current;
  }

  /** Calls `listener` with every new set picked up; returns a function that stops it. */
  onChange(listener: (set: CertificateSet) => void): () => void {
    this.changeListeners.add(listener);
    this.startPolling();
    return () => {
      this.changeListeners.delete(listener);
    };
  }

  /** Stops reading the files. */
  close(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private readNow(): CertificateSet {
    const read = (path: string | undefined, what: string): Buffer | undefined => {
      if (path === undefined) return undefined;
      try {
        return readFileSync(path);
      } catch (error) {
        throw filesError(`cannot read the TLS ${what} file ${path}: ${(error as Error).message}`, this.files, error);
      }
    };
    return {
      ...optional('cert', read(this.files.certFile, 'certificate')),
      ...optional('key', read(this.files.keyFile, 'key')),
      ...optional('ca', read(this.files.caFile, 'CA')),
    };
  }

  private startPolling(): void {
    if (this.timer !== undefined) return;
    this.timer = setInterval(() => this.reload().catch(unexpectedRejection), this.options.reloadIntervalMs);
    this.timer.unref();
  }

  /** Reads the files again and, when they changed and go together, makes them the set in use. */
  async reload(): Promise<boolean> {
    if (this.reading) return false;
    this.reading = true;
    try {
      const [cert, key, ca] = await Promise.all(
        [this.files.certFile, this.files.keyFile, this.files.caFile].map((path) =>
          path === undefined ? undefined : readFile(path),
        ),
      );
      const next: CertificateSet = { ...optional('cert', cert), ...optional('key', key), ...optional('ca', ca) };
      if (sameSet(next, this.current)) return false;
      checkSet(next, this.files);
      this.current = next;
      this.options.onReload?.(this.files);
      this.notify();
      return true;
    } catch (error) {
      this.options.onReloadFailed?.(
        error instanceof LedgerlineError
          ? error
          : filesError(`cannot read the TLS files again: ${(error as Error).message}`, this.files, error),
      );
      return false;
    } finally {
      this.reading = false;
    }
  }

  private notify(): void {
    for (const listener of this.changeListeners) listener(this.current);
    for (const listener of this.caListeners) this.sendCa(listener);
    for (const listener of this.identityListeners) this.sendIdentity(listener);
  }

  private sendCa(listener: experimental.CaCertificateUpdateListener): void {
    listener(this.current.ca === undefined ? null : { caCertificate: this.current.ca });
  }

  private sendIdentity(listener: experimental.IdentityCertificateUpdateListener): void {
    const { cert, key } = this.current;
    listener(cert === undefined || key === undefined ? null : { certificate: cert, privateKey: key });
  }

  // grpc-js registers listeners while it is still setting itself up, so the
  // first update is sent on the next tick, as grpc-js's own file watcher does.
  addCaCertificateListener(listener: experimental.CaCertificateUpdateListener): void {
    this.caListeners.add(listener);
    this.startPolling();
    queueMicrotask(() => {
      if (this.caListeners.has(listener)) this.sendCa(listener);
    });
  }

  removeCaCertificateListener(listener: experimental.CaCertificateUpdateListener): void {
    this.caListeners.delete(listener);
  }

  addIdentityCertificateListener(listener: experimental.IdentityCertificateUpdateListener): void {
    this.identityListeners.add(listener);
    this.startPolling();
    queueMicrotask(() => {
      if (this.identityListeners.has(listener)) this.sendIdentity(listener);
    });
  }

  removeIdentityCertificateListener(listener: experimental.IdentityCertificateUpdateListener): void {
    this.identityListeners.delete(listener);
  }
}

function optional<K extends keyof CertificateSet>(key: K, value: Buffer | undefined): Partial<CertificateSet> {
  return value === undefined ? {} : { [key]: value };
}
