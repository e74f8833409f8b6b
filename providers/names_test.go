package providers

import "testing"

func TestNormalize(t *testing.T) {
	for in, want := range map[string]string{
		"web":             "web",
		"my_api.v2":       "my-api-v2",
		"--a..b--":        "a-b",
		"Ünïcode Service": "Ünïcode-Service",
		"web_stack":       "web-stack",
		"/my..app--1/":    "my-app-1",
		"Ünïcode_Náme":    "Ünïcode-Náme",
		"___":             "",
		"api_v2_project":  "api-v2-project",
		"apps/my.mw--x":   "apps-my-mw-x",
	} {
		if got := Normalize(in); got != want {
			t.Errorf("Normalize(%q): got %q, want %q", in, got, want)
		}
	}
}
