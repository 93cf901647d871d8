// progress.go: a small progress bar on stderr for add and cat on a TTY.

package commands

import (
	"fmt"
	"io"
	"strings"
	"time"

	humanize "github.com/dustin/go-humanize"
)

type progressBar struct {
	w       io.Writer
	total   int64
	done_   int64 // bytes of finished files
	cur     int64 // bytes of the current file
	curName string
	start   time.Time
	last    time.Time
}

func newProgressBar(w io.Writer, total int64) *progressBar {
	return &progressBar{w: w, total: total, start: time.Now()}
}

func (p *progressBar) update(name string, bytes int64) {
	if name != p.curName {
		p.curName = name
		p.cur = 0
	}
	p.cur = bytes
	if time.Since(p.last) < 100*time.Millisecond {
		return
	}
	p.last = time.Now()
	p.draw()
}

func (p *progressBar) done(name string) {
	if name == p.curName {
		p.done_ += p.cur
		p.cur = 0
		p.curName = ""
	}
	p.draw()
}

func (p *progressBar) draw() {
	n := p.done_ + p.cur
	el := time.Since(p.start).Seconds()
	speed := "?/s"
	if el > 0 {
		speed = humanBytes(int64(float64(n)/el)) + "/s"
	}
	if p.total <= 0 {
		fmt.Fprintf(p.w, "\033[2K\r%s %s", humanBytes(n), speed)
		return
	}
	pct := float64(n) / float64(p.total)
	if pct > 1 {
		pct = 1
	}
	const width = 30
	fill := int(pct * width)
	fmt.Fprintf(p.w, "\033[2K\r%s / %s [%s%s] %s %.2f%%", humanBytes(n), humanBytes(p.total),
		strings.Repeat("=", fill), strings.Repeat(" ", width-fill), speed, pct*100)
}

func (p *progressBar) clear() { fmt.Fprint(p.w, "\033[2K\r") }

func (p *progressBar) finish() { p.clear() }

func humanBytes(n int64) string {
	if n < 0 {
		n = 0
	}
	return humanize.IBytes(uint64(n))
}
