/** Stops the servers the global setup started and removes their folders. */
export default async function globalTeardown(): Promise<void> {
  const servers = globalThis.__ledgerlineServers ?? [];
  await Promise.all(servers.map((s) => s.stop()));
}
