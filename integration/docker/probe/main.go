// Command probe is the health check of the test whoami image, which is built
// FROM scratch and so has no shell or curl: it GETs the URL given as its only
// argument and exits 0 on a 2xx answer, 1 otherwise (Docker's HEALTHCHECK
// contract, https://docs.docker.com/reference/dockerfile/#healthcheck).
package main

import (
	"fmt"
	"net/http"
	"os"
	"time"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: probe URL")
		os.Exit(2)
	}
	c := &http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get(os.Args[1])
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	resp.Body.Close()
	fmt.Println(resp.Status)
	if resp.StatusCode/100 != 2 {
		os.Exit(1)
	}
}
