import { Option, type Command } from 'commander';

/** The metadata service address admin commands use unless --url says otherwise. */
export const DEFAULT_URL = process.env['LEDGERLINE_URL'] ?? 'localhost:6650';

/** The global connection options, added to the program once. */
export function addSecurityOptions(program: Command): void {
  const option = (flags: string, description: string): Option => new Option(flags, description);
  program
    .addOption(option('--tls-ca <file>', 'connect with TLS, trusting the CA certificates in this PEM file'))
    .addOption(option('--tls-cert <file>', 'client certificate (PEM) for mutual TLS, with --tls-key'))
    .addOption(option('--tls-key <file>', 'private key (PEM) of --tls-cert'))
    .addOption(option('--token <jwt>', 'bearer token sent with every call (env LEDGERLINE_TOKEN)'));
}
