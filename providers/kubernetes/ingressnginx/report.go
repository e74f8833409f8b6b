package ingressnginx

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// Report is the migration report: per Ingress of the class, per
// annotation, how Gantry serves it. The provider, `gantry migrate
// ingress-nginx` and the dashboard all build it with Translate.
type Report struct {
	Ingresses []IngressReport `json:"ingresses"`
	// Totals count annotations by support, over every Ingress.
	Totals Totals `json:"totals"`
}

// Totals counts annotations and Ingresses.
type Totals struct {
	Ingresses    int `json:"ingresses"`
	Annotations  int `json:"annotations"`
	Exact        int `json:"exact"`
	Approximated int `json:"approximated"`
	Refused      int `json:"refused"`
	// Unchanged counts the Ingresses whose every annotation is exact and
	// that have no problem: they move as they are.
	Unchanged int `json:"unchanged"`
	// Denied counts the Ingresses whose paths answer 503.
	Denied int `json:"denied"`
}

// IngressReport is one Ingress's part of the report.
type IngressReport struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Canary    bool   `json:"canary,omitempty"`
	// Status is "served" or "denied" (its paths answer 503 because of a
	// refused critical annotation).
	Status      string    `json:"status"`
	Annotations []Verdict `json:"annotations"`
	// Problems are the Ingress's other problems (paths, backends, Secrets).
	Problems []string `json:"problems,omitempty"`
}

func (r *Report) total() {
	t := Totals{Ingresses: len(r.Ingresses)}
	for _, in := range r.Ingresses {
		unchanged := len(in.Problems) == 0 && in.Status == "served"
		for _, v := range in.Annotations {
			t.Annotations++
			switch v.Support {
			case Exact:
				t.Exact++
			case Approximated:
				t.Approximated++
				unchanged = false
			default:
				t.Refused++
				unchanged = false
			}
		}
		if unchanged {
			t.Unchanged++
		}
		if in.Status == "denied" {
			t.Denied++
		}
	}
	r.Totals = t
}

// WriteText prints the report for a terminal: one block per Ingress, one
// line per annotation, then the totals.
func (r *Report) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, in := range r.Ingresses {
		kind := ""
		if in.Canary {
			kind = " (canary)"
		}
		fmt.Fprintf(tw, "Ingress %s/%s%s: %s\n", in.Namespace, in.Name, kind, in.Status)
		if len(in.Annotations) == 0 {
			fmt.Fprintf(tw, "  (no %s annotations)\n", strings.TrimSuffix(Prefix, "/"))
		}
		for _, v := range in.Annotations {
			fmt.Fprintf(tw, "  %s\t%s\t%s\n", v.Annotation, v.Support, oneLine(v.Detail))
		}
		for _, p := range in.Problems {
			fmt.Fprintf(tw, "  problem:\t%s\n", oneLine(p))
		}
	}
	t := r.Totals
	fmt.Fprintf(tw, "\nTotal: %d Ingresses (%d move unchanged, %d denied), %d annotations: %d exact, %d approximated, %d refused\n",
		t.Ingresses, t.Unchanged, t.Denied, t.Annotations, t.Exact, t.Approximated, t.Refused)
	return tw.Flush()
}

func oneLine(s string) string {
	return strings.NewReplacer("\n", " ", "\r", " ", "\t", " ").Replace(s)
}
