// Every page's address. Names hold slashes (persistent://t/n/x), so each is
// one encoded path segment.

const segment = encodeURIComponent;

export const paths = {
  overview: () => '/',
  tenants: () => '/tenants',
  namespace: (namespace: string) => `/namespaces/${segment(namespace)}`,
  topic: (topic: string) => `/topics/${segment(topic)}`,
  subscription: (topic: string, subscription: string) =>
    `/topics/${segment(topic)}/subscriptions/${segment(subscription)}`,
  messages: (topic: string) => `/topics/${segment(topic)}/messages`,
  collector: () => '/collector',
  kafka: () => '/kafka',
};
