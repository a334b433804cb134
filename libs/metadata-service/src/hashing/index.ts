// Rendezvous hashing alone, for packages that place work the way lookups place
// topics (the Kafka gateway's group coordinators): importing it loads none of
// the service.
export { rendezvousPick } from '../rendezvous.js';
