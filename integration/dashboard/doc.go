// Package dashboard holds the end-to-end tests of Gantry's dashboard and
// observability against the real gantry binary (built by
// integration/harness): a browser test driving Debian's chromium through
// chromedp, a Prometheus scrape after real traffic, server status following
// the health check (case 032) and router errors visible in the API (case
// 008). The browser test
// skips when chromium is missing (scripts/setup/chromium.sh installs it)
// and saves a screenshot to integration/artifacts/.
package dashboard
