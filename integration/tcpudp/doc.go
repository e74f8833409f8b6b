// Package tcpudp tests TCP and UDP routing through the real gantry binary
// against real servers and clients from Debian (redis-server/redis-cli,
// openssl s_server/s_client, socat, dnsmasq/dig, postgresql/psql),
// installed by scripts/setup/tcpudp.sh. A missing tool fails under CI.
package tcpudp
