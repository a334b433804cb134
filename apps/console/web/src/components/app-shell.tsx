import { NavLink, Outlet } from 'react-router';
import { TokenPrompt } from './token-prompt';
import { WhoAmI } from './who-am-i';

const SECTIONS: [string, string][] = [
  ['/', 'Overview'],
  ['/tenants', 'Tenants'],
  ['/collector', 'Collector'],
  ['/kafka', 'Kafka'],
];

export function AppShell() {
  return (
    <div className="shell">
      <header>
        <span className="brand">Ledgerline</span>
        <nav>
          {SECTIONS.map(([to, label]) => (
            <NavLink key={to} to={to} end={to === '/'}>
              {label}
            </NavLink>
          ))}
        </nav>
        <WhoAmI />
      </header>
      <main>
        <Outlet />
      </main>
      <TokenPrompt />
    </div>
  );
}
