// Is this a loopback host? One answer for the DNS-rebinding check, the OAuth
// auto-login rule and native-client redirect URIs. Guarantees: accepts
// `localhost`, 127.0.0.0/8 and ::1 (with or without brackets), nothing else.

export function isLoopbackHost(hostname: string): boolean {
  const h = hostname.toLowerCase().replace(/^\[|\]$/g, '');
  return h === 'localhost' || h === '::1' || /^127(\.\d{1,3}){3}$/.test(h);
}

export function isLoopbackUrl(url: string): boolean {
  const u = URL.parse(url);
  return !!u && isLoopbackHost(u.hostname);
}
