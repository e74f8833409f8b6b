// Package e2e tests Gantry end to end: the real gantry binary, built by
// integration/harness, with static and dynamic configuration files, in front
// of real whoami backend processes (and, where the test needs to observe the
// backend side exactly, an in-process HTTP backend). Everything listens on
// 127.0.0.1. Waiting is done by polling (harness.Try), never by sleeping.
package e2e
