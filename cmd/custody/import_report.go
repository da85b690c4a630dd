package main

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/client"
	"github.com/custody-mem/custody/internal/bulk"
)

// stop is where an import stopped: its batches, what became of each, the
// first one refused (in the order of the file), the --skip it ran with and
// how many candidates the file holds.
type stop struct {
	batches  []importBatch
	outcomes []bulk.Outcome
	refused  int
	skip     int
	total    int
}

var itemFieldRE = regexp.MustCompile(`^items\[(\d+)\]`)

// importError says where an import stopped: the line of the refused
// candidate when err names one, what is in the store (the candidates
// before its batch, and any batch after it sent before the refusal was
// known), and the --skip (and --count) that import what is missing.
func importError(err error, at stop, states map[custody.State]int) error {
	batch := at.batches[at.refused].items
	field, msg := "", err.Error()
	var ce *client.Error
	var de *custody.Error
	switch {
	case errors.As(err, &ce):
		field, msg = ce.Field, ce.Message
	case errors.As(err, &de):
		field, msg = de.Field, de.Msg
	}
	where := fmt.Sprintf("the batch of %s", lineRange(batch))
	if m := itemFieldRE.FindStringSubmatch(field); m != nil {
		if i, _ := strconv.Atoi(m[1]); i < len(batch) {
			where = fmt.Sprintf("line %d", batch[i].line)
			msg = strings.TrimPrefix(strings.TrimPrefix(msg, field+": "), m[0]+": ")
		}
	}
	before := at.skip + at.batches[at.refused].start
	var later []string
	for j := at.refused + 1; j < len(at.batches); j++ {
		if at.outcomes[j] == bulk.Written {
			later = append(later, lineRange(at.batches[j].items))
		}
	}
	if len(later) == 0 {
		imported := "nothing was imported"
		if before > 0 {
			imported = fmt.Sprintf("the %d candidates before its batch are in the store (this run: %s); mend the line and run again with %s",
				before, stateSummary(states), strings.Join(at.missing(), ", then "))
		}
		return fmt.Errorf("%s was refused, with its whole batch: %s\n%s", where, msg, imported)
	}
	also := ""
	if before > 0 {
		also = fmt.Sprintf(", as are the %d candidates before the refused batch", before)
	}
	return fmt.Errorf("%s was refused, with its whole batch: %s\nthe candidates of %s were sent before the refusal was known and are in the store%s (this run: %s); mend the line and import what is missing with %s",
		where, msg, strings.Join(later, " and "), also, stateSummary(states), strings.Join(at.missing(), ", then "))
}

// missing is the --skip (and --count) of each run that imports a part of
// the candidates not written, from the refused batch on.
func (at stop) missing() []string {
	var out []string
	end := at.skip
	if n := len(at.batches); n > 0 {
		last := at.batches[n-1]
		end += last.start + len(last.items)
	}
	for j := at.refused; j < len(at.batches); {
		if at.outcomes[j] == bulk.Written {
			j++
			continue
		}
		from := at.skip + at.batches[j].start
		for j < len(at.batches) && at.outcomes[j] != bulk.Written {
			j++
		}
		to := end
		if j < len(at.batches) {
			to = at.skip + at.batches[j].start
		}
		if to == at.total {
			out = append(out, fmt.Sprintf("--skip %d", from))
		} else {
			out = append(out, fmt.Sprintf("--skip %d --count %d", from, to-from))
		}
	}
	return out
}

// lineRange is "lines 3 to 1007" of a batch.
func lineRange(batch []importItem) string {
	return fmt.Sprintf("lines %d to %d", batch[0].line, batch[len(batch)-1].line)
}
