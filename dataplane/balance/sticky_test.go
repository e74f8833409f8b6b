package balance

import "testing"

func TestCookieNames(t *testing.T) {
	if got := cookieName("my cookie;x", "s"); got != "my_cookie_x" {
		t.Errorf("sanitised name %q", got)
	}
	if got := cookieName("", "whoami@docker"); len(got) != 6 || got[0] != '_' {
		t.Errorf("derived name %q", got)
	}
	if cookieName("", "a@file") == cookieName("", "b@file") {
		t.Error("two services share a default cookie name")
	}
}
