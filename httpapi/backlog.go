package httpapi

import (
	"context"
	"time"

	"github.com/custody-mem/custody"
	"github.com/prometheus/client_golang/prometheus"
)

// backlogTimeout bounds the store read of one scrape.
const backlogTimeout = 5 * time.Second

// backlog is the collector of the review queue's gauges: its depth and the
// age of its oldest item, read from the store at each scrape, so a queue
// nobody works is visible in /metrics.
type backlog struct {
	svc        *custody.Service
	now        func() time.Time
	depth, age *prometheus.Desc
}

func newBacklog(svc *custody.Service) *backlog {
	return &backlog{svc: svc, now: time.Now,
		depth: prometheus.NewDesc("custody_review_queue_depth", "Candidates waiting in quarantine for review, across tenants.", nil, nil),
		age: prometheus.NewDesc("custody_review_queue_oldest_age_seconds",
			"Age of the oldest candidate waiting for review (0 when none waits).", nil, nil),
	}
}

func (b *backlog) Describe(ch chan<- *prometheus.Desc) { ch <- b.depth; ch <- b.age }

func (b *backlog) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), backlogTimeout)
	defer cancel()
	depth, oldest, err := b.svc.ReviewBacklog(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(b.depth, err)
		return
	}
	age := 0.0
	if !oldest.IsZero() {
		age = max(0, b.now().Sub(oldest).Seconds())
	}
	ch <- prometheus.MustNewConstMetric(b.depth, prometheus.GaugeValue, float64(depth))
	ch <- prometheus.MustNewConstMetric(b.age, prometheus.GaugeValue, age)
}
