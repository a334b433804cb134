// The bearer token lives in sessionStorage: it survives a reload of the tab
// but not the tab itself, and other tabs and sites never see it.
const KEY = 'ledgerline.console.token';

export function readToken(): string | undefined {
  return sessionStorage.getItem(KEY) ?? undefined;
}

export function saveToken(token: string): void {
  sessionStorage.setItem(KEY, token.trim());
}

export function forgetToken(): void {
  sessionStorage.removeItem(KEY);
}
