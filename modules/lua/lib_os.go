// lib_os.go: the os functions the sandbox keeps, as Lua 5.1 defines
// them on a C library with the POSIX locale (glibc's strftime).

package lua

import (
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"time"

	lua "github.com/yuin/gopher-lua"
)

// newOSLib is the trimmed os table: time, clock, date, difftime.
func newOSLib(L *lua.LState) *lua.LTable {
	t := L.NewTable()
	set := func(name string, f lua.LGFunction) { t.RawSetString(name, L.NewFunction(f)) }
	set("time", osTime)
	set("clock", func(L *lua.LState) int {
		var ru syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		L.Push(lua.LNumber(cpu.Seconds()))
		return 1
	})
	set("date", osDate)
	set("difftime", func(L *lua.LState) int {
		L.Push(lua.LNumber(L.CheckNumber(1) - L.OptNumber(2, 0)))
		return 1
	})
	return t
}

// osTime is os.time([t]): now, or the local time the table t names
// (year, month, day required; hour 12, min 0, sec 0 by default), out of
// range fields normalised as mktime does.
func osTime(L *lua.LState) int {
	if L.GetTop() == 0 || L.Get(1) == lua.LNil {
		L.Push(lua.LNumber(time.Now().Unix()))
		return 1
	}
	tab := L.CheckTable(1)
	field := func(key string, def int) int {
		v := tab.RawGetString(key)
		if n, ok := v.(lua.LNumber); ok {
			return int(n)
		}
		if s, ok := v.(lua.LString); ok {
			if f, err := strconv.ParseFloat(strings.TrimSpace(string(s)), 64); err == nil {
				return int(f)
			}
		}
		if def < 0 {
			L.RaiseError("field '%s' missing in date table", key)
		}
		return def
	}
	sec, min, hour := field("sec", 0), field("min", 0), field("hour", 12)
	day, month, year := field("day", -1), field("month", -1), field("year", -1)
	d := time.Date(year, time.Month(month), day, hour, min, sec, 0, time.Local)
	L.Push(lua.LNumber(d.Unix()))
	return 1
}

// osDate is os.date([format [, time]]): "!" first means UTC, "*t" gives
// a table, anything else goes through strftime (default "%c").
func osDate(L *lua.LState) int {
	format := L.OptString(1, "%c")
	t := time.Now()
	if L.GetTop() >= 2 && L.Get(2) != lua.LNil {
		t = time.Unix(int64(L.CheckNumber(2)), 0)
	}
	utc := false
	if strings.HasPrefix(format, "!") {
		utc, format = true, format[1:]
		t = t.UTC()
	} else {
		t = t.Local()
	}
	if format == "*t" {
		tab := L.NewTable()
		for k, v := range map[string]int{"year": t.Year(), "month": int(t.Month()), "day": t.Day(),
			"hour": t.Hour(), "min": t.Minute(), "sec": t.Second(), "wday": int(t.Weekday()) + 1, "yday": t.YearDay()} {
			tab.RawSetString(k, lua.LNumber(v))
		}
		tab.RawSetString("isdst", lua.LBool(!utc && t.IsDST()))
		L.Push(tab)
		return 1
	}
	L.Push(lua.LString(strftime(format, t, utc)))
	return 1
}

var (
	weekdays = []string{"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"}
	months   = []string{"January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"}
)

// strftime formats t as C's strftime in the POSIX locale. An unknown
// conversion is copied as it is, and a lone "%" at the end stays.
func strftime(format string, t time.Time, utc bool) string {
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' || i+1 == len(format) {
			b.WriteByte(c)
			continue
		}
		i++
		b.WriteString(conversion(format[i], t, utc))
	}
	return b.String()
}

func conversion(c byte, t time.Time, utc bool) string {
	yday := t.YearDay() - 1
	wday := int(t.Weekday())
	h12 := t.Hour() % 12
	if h12 == 0 {
		h12 = 12
	}
	switch c {
	case 'a':
		return weekdays[wday][:3]
	case 'A':
		return weekdays[wday]
	case 'b', 'h':
		return months[t.Month()-1][:3]
	case 'B':
		return months[t.Month()-1]
	case 'c':
		return strftime("%a %b %e %H:%M:%S %Y", t, utc)
	case 'C':
		return fmt.Sprintf("%02d", t.Year()/100)
	case 'd':
		return fmt.Sprintf("%02d", t.Day())
	case 'D', 'x':
		return strftime("%m/%d/%y", t, utc)
	case 'e':
		return fmt.Sprintf("%2d", t.Day())
	case 'F':
		return strftime("%Y-%m-%d", t, utc)
	case 'g':
		y, _ := t.ISOWeek()
		return fmt.Sprintf("%02d", y%100)
	case 'G':
		y, _ := t.ISOWeek()
		return strconv.Itoa(y)
	case 'H':
		return fmt.Sprintf("%02d", t.Hour())
	case 'I':
		return fmt.Sprintf("%02d", h12)
	case 'j':
		return fmt.Sprintf("%03d", yday+1)
	case 'k':
		return fmt.Sprintf("%2d", t.Hour())
	case 'l':
		return fmt.Sprintf("%2d", h12)
	case 'm':
		return fmt.Sprintf("%02d", int(t.Month()))
	case 'M':
		return fmt.Sprintf("%02d", t.Minute())
	case 'n':
		return "\n"
	case 'p':
		if t.Hour() < 12 {
			return "AM"
		}
		return "PM"
	case 'P':
		if t.Hour() < 12 {
			return "am"
		}
		return "pm"
	case 'r':
		return strftime("%I:%M:%S %p", t, utc)
	case 'R':
		return strftime("%H:%M", t, utc)
	case 's':
		return strconv.FormatInt(t.Unix(), 10)
	case 'S':
		return fmt.Sprintf("%02d", t.Second())
	case 't':
		return "\t"
	case 'T', 'X':
		return strftime("%H:%M:%S", t, utc)
	case 'u':
		return strconv.Itoa((wday+6)%7 + 1)
	case 'U':
		return fmt.Sprintf("%02d", (yday+7-wday)/7)
	case 'V':
		_, w := t.ISOWeek()
		return fmt.Sprintf("%02d", w)
	case 'w':
		return strconv.Itoa(wday)
	case 'W':
		return fmt.Sprintf("%02d", (yday+7-(wday+6)%7)/7)
	case 'y':
		return fmt.Sprintf("%02d", t.Year()%100)
	case 'Y':
		return strconv.Itoa(t.Year())
	case 'z':
		_, off := t.Zone()
		sign := '+'
		if off < 0 {
			sign, off = '-', -off
		}
		return fmt.Sprintf("%c%02d%02d", sign, off/3600, off%3600/60)
	case 'Z':
		if utc {
			return "GMT" // glibc's gmtime names UTC so
		}
		name, _ := t.Zone()
		return name
	case '%':
		return "%"
	}
	return "%" + string(c)
}
