// Package dashboard holds the end-to-end tests of Gantry's dashboard and
// observability against the real gantry binary (built by
// integration/harness): a browser test driving Debian's chromium through
// chromedp, and a Prometheus scrape after real traffic. The browser test
// skips when chromium is missing (scripts/setup/chromium.sh installs it)
// and saves a screenshot to integration/artifacts/.
package dashboard
