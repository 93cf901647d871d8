// convert.go: events into Lua tables, Lua results into Go values.

package lua

import (
	"fmt"
	"net"

	"cairn/modules/httpapp"

	lua "github.com/yuin/gopher-lua"
)

func stringMap(L *lua.LState, m map[string]string) *lua.LTable {
	t := L.NewTable()
	for k, v := range m {
		t.RawSetString(k, lua.LString(v))
	}
	return t
}

// eventTable builds {request = ..., response = ...} for ev. The response
// table's send() finishes ev.Response.
func (m *Module) eventTable(ev *httpapp.Event) (*lua.LTable, *lua.LTable) {
	L := m.L
	r := ev.Request
	req := requestTable(L, r)
	req.RawSetString("log", L.NewFunction(logFunc(m, 0, "request", r.ID)))
	resp := L.NewTable()
	resp.RawSetString("status_code", lua.LNumber(ev.Response.StatusCode))
	resp.RawSetString("headers", stringMap(L, ev.Response.Headers))
	resp.RawSetString("is_head_request", lua.LBool(r.Method == "HEAD"))
	resp.RawSetString("finished", lua.LFalse)
	resp.RawSetString("send", L.NewFunction(func(L *lua.LState) int {
		self := L.CheckTable(1)
		if ev.Response.Finished() {
			L.Push(lua.LTrue)
			return 1
		}
		syncResponse(self, ev.Response)
		var body []byte
		if s, ok := L.Get(2).(lua.LString); ok {
			body = []byte(s)
		} else if b, ok := self.RawGetString("body").(lua.LString); ok {
			body = []byte(b)
		} else {
			body = []byte{}
		}
		ev.Response.Send(body)
		self.RawSetString("finished", lua.LTrue)
		L.Push(lua.LTrue)
		return 1
	}))
	evt := L.NewTable()
	evt.RawSetString("request", req)
	evt.RawSetString("response", resp)
	return evt, resp
}

// requestTable is event.request.
func requestTable(L *lua.LState, r *httpapp.Request) *lua.LTable {
	req := L.NewTable()
	req.RawSetString("method", lua.LString(r.Method))
	req.RawSetString("path", lua.LString(r.Path))
	u := L.NewTable()
	u.RawSetString("path", lua.LString(r.URL.Path))
	if r.URL.HasQuery {
		u.RawSetString("query", lua.LString(r.URL.Query))
	}
	req.RawSetString("url", u)
	req.RawSetString("httpversion", lua.LString(r.Version))
	req.RawSetString("headers", stringMap(L, r.Headers))
	if r.Body != nil {
		req.RawSetString("body", lua.LString(r.Body))
	} else if r.BodyStream == nil {
		req.RawSetString("body", lua.LString(""))
	} else {
		req.RawSetString("body", lua.LFalse)
	}
	req.RawSetString("ip", lua.LString(r.IP))
	if r.Secure {
		req.RawSetString("secure", lua.LTrue)
	}
	req.RawSetString("id", lua.LString(r.ID))
	conn := L.NewTable()
	conn.RawSetString("remote_addr", lua.LString(r.Conn.RemoteAddr))
	conn.RawSetString("local_addr", lua.LString(r.Conn.LocalAddr))
	peerIP := lua.LString(r.Conn.RemoteAddr)
	if host, _, err := net.SplitHostPort(r.Conn.RemoteAddr); err == nil {
		peerIP = lua.LString(host)
	}
	conn.RawSetString("ip", L.NewFunction(func(L *lua.LState) int { L.Push(peerIP); return 1 }))
	conn.RawSetString("ssl", L.NewFunction(func(L *lua.LState) int { L.Push(lua.LBool(r.Conn.TLS)); return 1 }))
	req.RawSetString("conn", conn)

	return req
}

// syncResponse copies status_code, status, headers and body from the Lua
// response table onto the Go response.
func syncResponse(t *lua.LTable, r *httpapp.Response) {
	if n, ok := t.RawGetString("status_code").(lua.LNumber); ok {
		r.StatusCode = int(n)
	}
	if s, ok := t.RawGetString("status").(lua.LString); ok {
		r.Status = string(s)
	}
	if h, ok := t.RawGetString("headers").(*lua.LTable); ok {
		h.ForEach(func(k, v lua.LValue) {
			if ks, ok := k.(lua.LString); ok {
				if v == lua.LNil || v == lua.LFalse {
					delete(r.Headers, string(ks))
					return
				}
				r.Headers[string(ks)] = lua.LVAsString(v)
			}
		})
	}
	if b, ok := t.RawGetString("body").(lua.LString); ok {
		r.Body = []byte(b)
	}
}

// result converts a Lua handler's return value to the Go value
// httpapp.Handler returns (see the list there).
func result(v lua.LValue) any {
	switch v := v.(type) {
	case *lua.LNilType:
		return nil
	case lua.LBool:
		return bool(v)
	case lua.LString:
		return string(v)
	case lua.LNumber:
		return int(v)
	case *lua.LTable:
		return tableResult(v)
	}
	return false
}

// tableResult is a returned table: an error object ({code=..., text=...}
// without status_code/body) or a response table.
func tableResult(t *lua.LTable) any {
	_, hasStatus := t.RawGetString("status_code").(lua.LNumber)
	_, hasBody := t.RawGetString("body").(lua.LString)
	if code, ok := t.RawGetString("code").(lua.LNumber); ok && !hasStatus && !hasBody {
		return &httpapp.Error{Code: int(code), Text: lua.LVAsString(t.RawGetString("text"))}
	}
	rep := &httpapp.Reply{Headers: map[string]string{}}
	if n, ok := t.RawGetString("status_code").(lua.LNumber); ok {
		rep.StatusCode = int(n)
	}
	if s, ok := t.RawGetString("status").(lua.LString); ok {
		rep.Status = string(s)
	}
	if b, ok := t.RawGetString("body").(lua.LString); ok {
		rep.Body = []byte(b)
	}
	if h, ok := t.RawGetString("headers").(*lua.LTable); ok {
		h.ForEach(func(k, v lua.LValue) { rep.Headers[k.String()] = lua.LVAsString(v) })
	}
	return rep
}

// constValue converts a non-function route value.
func constValue(v lua.LValue) any {
	r := result(v)
	if r == nil {
		return false
	}
	return r
}

// resultToLua converts a Go handler's result for Lua code that called it.
func resultToLua(L *lua.LState, v any) lua.LValue {
	switch v := v.(type) {
	case nil:
		return lua.LNil
	case bool:
		return lua.LBool(v)
	case string:
		return lua.LString(v)
	case []byte:
		return lua.LString(v)
	case int:
		return lua.LNumber(v)
	case *httpapp.Error:
		t := L.NewTable()
		t.RawSetString("code", lua.LNumber(v.Code))
		t.RawSetString("text", lua.LString(v.Text))
		return t
	case error:
		L.RaiseError("%s", v.Error())
	}
	return lua.LNil
}

// goToLua converts config option values (decoded JSON).
func goToLua(L *lua.LState, v any) lua.LValue {
	switch v := v.(type) {
	case nil:
		return lua.LNil
	case bool:
		return lua.LBool(v)
	case string:
		return lua.LString(v)
	case []byte:
		return lua.LString(v)
	case float64:
		return lua.LNumber(v)
	case int:
		return lua.LNumber(v)
	case []any:
		t := L.NewTable()
		for _, e := range v {
			t.Append(goToLua(L, e))
		}
		return t
	case map[string]any:
		t := L.NewTable()
		for k, e := range v {
			t.RawSetString(k, goToLua(L, e))
		}
		return t
	}
	return lua.LString(fmt.Sprint(v))
}
