-- module:load_resource, as prosody-modules use it.
module:depends("http")
module:provides("http", {
	route = {
		["GET /all"] = function()
			local f = assert(module:load_resource("testdata.txt"))
			local s = f:read("*a")
			f:close()
			return s
		end,
		["GET /lines"] = function()
			local f = assert(module:load_resource("testdata.txt"))
			local out = {}
			for line in f:lines() do out[#out + 1] = "[" .. line .. "]" end
			return table.concat(out)
		end,
		["GET /refused"] = function()
			local _, e1 = module:load_resource("../lua_test.go")
			local _, e2 = module:load_resource("/etc/passwd")
			local _, e3 = module:load_resource("testdata.txt", "w")
			return table.concat({ e1, e2, e3 }, "\n")
		end,
	},
})
