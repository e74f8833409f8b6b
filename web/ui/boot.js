// boot.js is the dashboard's one classic script, run while the page is
// parsed: when its modules fail to load (a request cut on the way, so the
// browser gives up the whole module graph and the page stays inert: no
// data, no live updates), it reloads the page after a second, three times
// at the most in a row (app.js resets the count once it runs), then says so.
// Chromium itself fails every request in flight, without retrying it, with
// net::ERR_NETWORK_CHANGED when an address of the host comes or goes (Docker
// creating or removing a network does that), so this happens to a healthy
// proxy too.
{
  const key = 'gantry-dashboard-boot-failures';
  const app = document.querySelector('script[type=module][src="app.js"]');
  if (app) {
    app.addEventListener('error', () => {
      const n = Number(sessionStorage.getItem(key) || 0) + 1;
      sessionStorage.setItem(key, String(n));
      if (n <= 3) {
        setTimeout(() => location.reload(), 1000);
        return;
      }
      const p = document.createElement('p');
      p.className = 'errbox';
      p.textContent = 'The dashboard\'s code did not load (' + n + ' tries). Reload the page to try again.';
      document.body.prepend(p);
    });
  }
}
