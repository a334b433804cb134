import { createClient, type Client, type Interceptor } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-web';
import { ConsoleService } from '@gen/console_pb';
import { readToken } from './token-store';

export type ConsoleClient = Client<typeof ConsoleService>;

/** Every call carries the token the user gave, as the services expect it. */
const bearerToken: Interceptor = (next) => async (request) => {
  const token = readToken();
  if (token !== undefined && token !== '') request.header.set('Authorization', `Bearer ${token}`);
  return next(request);
};

/**
 * The console server answers ConsoleService on the origin that served the
 * page, under the path the page was served from (a proxy may mount it under one).
 */
function consoleBaseUrl(): string {
  const path = window.location.pathname.replace(/\/[^/]*$/, '');
  return `${window.location.origin}${path}`;
}

export const consoleClient: ConsoleClient = createClient(
  ConsoleService,
  createConnectTransport({ baseUrl: consoleBaseUrl(), interceptors: [bearerToken] }),
);
