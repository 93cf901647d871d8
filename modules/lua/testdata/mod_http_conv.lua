-- Every return convention of a handler (httpapp.Handler), and the request fields.
module:depends("http")
local http = require "net.http"

module:provides("http", {
	route = {
		["GET"] = function(event) return "base" end,
		["GET /string"] = function(event)
			event.response.headers.x_set = "1"
			return "a string"
		end,
		["GET /404"] = function() return 404 end,
		["GET /503"] = function() return 503 end,
		["GET /201"] = function(event)
			event.response.body = "made"
			return 201
		end,
		["GET /send"] = function(event)
			event.response.headers.content_type = "text/plain"
			event.response.status_code = 202
			event.response:send("sent")
			return true
		end,
		["GET /table"] = function()
			return { status_code = 418, body = "teapot", headers = { content_type = "text/plain" } }
		end,
		["GET /errobj"] = function() return { code = 409, text = "conflict here" } end,
		["GET /nil"] = function() end,
		["GET /false"] = function() return false end,
		["GET /wild/*"] = function(event, path) return "wild:" .. path end,
		["GET /const"] = "constant",
		["POST /echo"] = function(event)
			local f = http.formdecode(event.request.body)
			return f.name .. "|" .. event.request.headers.content_type .. "|" .. #f
		end,
		["GET /req"] = function(event)
			local r = event.request
			return table.concat({ r.method, r.path, r.url.path, r.url.query or "-", tostring(r.secure), r.conn.ip() }, " ")
		end,
		["GET /sandbox"] = function()
			return table.concat({ tostring(io), tostring(os.execute), tostring(dofile), tostring(loadfile),
				tostring(debug), tostring(package), type(os.time()), type(cairn.id) }, " ")
		end,
		["GET /require"] = function() return require "os" end,
		["GET /write"] = function()
			local c, err = cairn.add("from lua")
			return c or ("refused: " .. err)
		end,
		["GET /id"] = function() return cairn.id() end,
		["GET /option"] = function() return module:get_option("greeting", "default") end,
	},
})
