import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { createHashRouter, RouterProvider } from 'react-router';
import { AuthProvider } from './api/auth-context';
import { AppShell } from './components/app-shell';
import { CollectorPage } from './pages/collector-page';
import { KafkaPage } from './pages/kafka-page';
import { MessagesPage } from './pages/messages-page';
import { NamespacePage } from './pages/namespace-page';
import { OverviewPage } from './pages/overview-page';
import { SubscriptionPage } from './pages/subscription-page';
import { TenantsPage } from './pages/tenants-page';
import { TopicPage } from './pages/topic-page';
import './styles.css';

// Hash addresses: every page is a link that works from any static server or
// proxy path, with no fallback route needed on the console server.
const router = createHashRouter([
  {
    path: '/',
    element: <AppShell />,
    children: [
      { index: true, element: <OverviewPage /> },
      { path: 'tenants', element: <TenantsPage /> },
      { path: 'namespaces/:namespace', element: <NamespacePage /> },
      { path: 'topics/:topic', element: <TopicPage /> },
      { path: 'topics/:topic/subscriptions/:subscription', element: <SubscriptionPage /> },
      { path: 'topics/:topic/messages', element: <MessagesPage /> },
      { path: 'collector', element: <CollectorPage /> },
      { path: 'kafka', element: <KafkaPage /> },
    ],
  },
]);

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <AuthProvider>
      <RouterProvider router={router} />
    </AuthProvider>
  </StrictMode>,
);
