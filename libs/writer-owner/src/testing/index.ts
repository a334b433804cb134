export { startWriterCluster } from './cluster.js';
export type { WriterCluster } from './cluster.js';
export { ServiceProcess } from './service-process.js';
