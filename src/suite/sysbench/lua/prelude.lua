-- rqps's sysbench Lua API, the part written in Lua (the rest is Rust: sql.rs,
-- capi.rs and report.rs in this folder). Written for rqps from the behaviour
-- sysbench 1.0 documents and shows; none of sysbench's own code. Loaded into
-- every state before the user's script, with `raw` (the Rust functions and
-- sysbench's C declarations) as its argument; `sysbench` already holds tid,
-- opt (filled later), cmdline (command, script_path, argv) and version.
local raw = ...

ffi = require("ffi")
-- sysbench's C types and functions, as its own modules declare them.
ffi.cdef(raw.cdef)
local C = ffi.C

-- A script ends its test, not rqps: the run is stored.
os.exit = raw.exit

sysbench.error = { NONE = 0, RESTART_EVENT = 1 }
sysbench.hooks = {}

local cmdline = sysbench.cmdline
cmdline.ARG_NULL = 0
cmdline.ARG_BOOL = 1
cmdline.ARG_INT = 2
cmdline.ARG_SIZE = 3
cmdline.ARG_DOUBLE = 4
cmdline.ARG_STRING = 5
cmdline.ARG_LIST = 6
cmdline.ARG_FILE = 7
cmdline.ARG_MAX = 8
cmdline.PARALLEL_COMMAND = true

function cmdline.command_defined(name)
   return type(cmdline.commands) == "table" and cmdline.commands[name] ~= nil
      and cmdline.commands[name][1] ~= nil
end

function cmdline.command_parallel(name)
   return cmdline.command_defined(name)
      and cmdline.commands[name][2] == cmdline.PARALLEL_COMMAND
end

-- The script's options as sysbench's help prints them: sorted, each with
-- the form of its value, its description and its default.
local FORMS = { [1] = "[=on|off]", [2] = "=N", [3] = "=SIZE", [4] = "=N",
                [5] = "=STRING", [6] = "=[LIST,...]", [7] = "=FILENAME" }
function cmdline.print_test_options()
   local rows = __rqps_declared_options()
   table.sort(rows, function(a, b) return a[1] < b[1] end)
   local width = 0
   for _, r in ipairs(rows) do
      local n = #r[1] + #(FORMS[r[4]] or "=UNKNOWN")
      if n > width then width = n end
   end
   for _, r in ipairs(rows) do
      local form = FORMS[r[4]] or "=UNKNOWN"
      local line = "  --" .. r[1] .. form .. string.rep(" ", width - #r[1] - #form + 1) .. r[2]
      if r[3] ~= nil then
         line = line .. " [" .. r[3] .. "]"
      end
      print(line)
   end
   print("")
end

function cmdline.call_command(name)
   if not cmdline.command_defined(name) then
      return false
   end
   local rc = cmdline.commands[name][1]()
   if rc == nil then
      return true
   end
   return rc and true or false
end

-- The declared options as rows the Rust side reads: name, description,
-- default as text (nil: none), type number. The type follows the default's
-- Lua type when the declaration gives none, as sysbench infers it.
function __rqps_declared_options()
   local out = {}
   if cmdline.options == nil then
      return out
   end
   assert(type(cmdline.options) == "table",
          "wrong type for sysbench.cmdline.options: " .. type(cmdline.options))
   local by_type = { boolean = cmdline.ARG_BOOL, string = cmdline.ARG_STRING,
                     number = cmdline.ARG_DOUBLE, table = cmdline.ARG_LIST }
   for name, def in pairs(cmdline.options) do
      assert(type(name) == "string" and type(def) == "table",
             "wrong table structure in sysbench.cmdline.options")
      assert(def[1] ~= nil, "nil description for option " .. name)
      local v = def[2]
      local text
      if type(v) == "table" then
         text = table.concat(v, ",")
      elseif type(v) == "boolean" then
         text = v and "on" or "off"
      elseif v ~= nil then
         text = tostring(v)
      end
      local t = def[3]
      if t == nil then
         t = v ~= nil and by_type[type(v)] or cmdline.ARG_STRING
      end
      assert(t ~= nil, "cannot determine type for option " .. name)
      out[#out + 1] = { name, tostring(def[1]), text, t }
   end
   return out
end

---------------------------------------------------------------------------
-- sysbench.rand: sysbench's C functions, called as sysbench calls them.

local rand = {}
sysbench.rand = rand
function rand.default(a, b) return C.sb_rand_default(a, b) end
function rand.uniform(a, b) return C.sb_rand_uniform(a, b) end
function rand.gaussian(a, b) return C.sb_rand_gaussian(a, b) end
function rand.special(a, b) return C.sb_rand_special(a, b) end
function rand.pareto(a, b) return C.sb_rand_pareto(a, b) end
rand.zipfian = raw.zipfian
function rand.uniform_uint64() return C.sb_rand_uniform_uint64() end
function rand.uniform_double() return C.sb_rand_uniform_double() end
function rand.unique() return C.sb_rand_unique() end
function rand.string(fmt)
   local n = #fmt
   local buf = ffi.new("char[?]", n + 1)
   C.sb_rand_str(fmt, buf)
   return ffi.string(buf, n)
end

---------------------------------------------------------------------------
-- Reports: sysbench's three layouts of a report's figures, for the
-- report_intermediate and report_cumulative hooks.

local function rates(stat)
   local s = stat.time_interval
   return stat.events / s, (stat.reads + stat.writes + stat.other) / s,
      stat.reads / s, stat.writes / s, stat.other / s,
      stat.errors / s, stat.reconnects / s
end

function sysbench.report_default(stat)
   local tps, qps, r, w, o, err, rec = rates(stat)
   print(string.format("[ %.0fs ] thds: %d tps: %4.2f qps: %4.2f (r/w/o: %4.2f/%4.2f/%4.2f) "
                          .. "lat (ms,%d%%): %4.2f err/s %4.2f reconn/s: %4.2f",
                       stat.time_total, stat.threads_running, tps, qps, r, w, o,
                       sysbench.opt.percentile or 95, stat.latency_pct * 1000, err, rec))
end

function sysbench.report_csv(stat)
   local tps, qps, r, w, o, err, rec = rates(stat)
   print(string.format("%.0f,%d,%4.2f,%4.2f,%4.2f,%4.2f,%4.2f,%4.2f,%4.2f,%4.2f",
                       stat.time_total, stat.threads_running, tps, qps, r, w, o,
                       stat.latency_pct * 1000, err, rec))
end

-- A JSON array of the reports a state makes: "[" before the first, ","
-- between them, and "]" when the state closes (its finalizer).
local json_closer
function sysbench.report_json(stat)
   if json_closer == nil then
      json_closer = newproxy(true)
      getmetatable(json_closer).__gc = function() io.write("\n]\n") end
      io.write("[\n")
   else
      io.write(",\n")
   end
   local tps, qps, r, w, o, err, rec = rates(stat)
   io.write(string.format(table.concat({
      '  {',
      '    "time": %4.0f,',
      '    "threads": %d,',
      '    "tps": %4.2f,',
      '    "qps": {',
      '      "total": %4.2f,',
      '      "reads": %4.2f,',
      '      "writes": %4.2f,',
      '      "other": %4.2f',
      '    },',
      '    "latency": %4.2f,',
      '    "errors": %4.2f,',
      '    "reconnects": %4.2f',
      '  }' }, "\n"),
      stat.time_total, stat.threads_running, tps, qps, r, w, o,
      stat.latency_pct * 1000, err, rec))
end

---------------------------------------------------------------------------
-- sysbench.histogram: a latency histogram of sysbench's shape, in C.

local Histogram = {}
Histogram.__index = Histogram
function Histogram.update(self, value) C.sb_histogram_update(self, value) end
function Histogram.print(self) C.sb_histogram_print(self) end
ffi.metatype("sb_histogram_t", Histogram)
sysbench.histogram = {}
function sysbench.histogram.new(size, range_min, range_max)
   local h = C.sb_histogram_new(size, range_min, range_max)
   if h == nil then
      error(string.format("sysbench.histogram.new(%s, %s, %s): a histogram needs 2 to 1048576 "
                          .. "slots and 0 < range_min < range_max",
                          tostring(size), tostring(range_min), tostring(range_max)), 2)
   end
   return ffi.gc(h, C.sb_histogram_delete)
end

-- Legacy names sysbench 1.0 still defines for older scripts.
thread_id = sysbench.tid
test = cmdline.script_path
sb_rand = sysbench.rand.default
sb_rand_str = sysbench.rand.string
sb_rand_uniform = sysbench.rand.uniform
sb_rand_gaussian = sysbench.rand.gaussian
sb_rand_special = sysbench.rand.special
function sb_rnd()
   return tonumber(sysbench.rand.uniform_uint64() % 4294967296ULL)
end
function sb_rand_uniq(a, b)
   a = a or 0
   b = b or 4294967295
   local v
   repeat
      v = sysbench.rand.unique()
   until v >= a and v <= b
   return v
end

---------------------------------------------------------------------------
-- sysbench.sql: drivers, connections, statements, results.

local sql = {}
sysbench.sql = sql
sql.type = { NONE = 0, TINYINT = 1, SMALLINT = 2, INT = 3, BIGINT = 4,
             FLOAT = 5, DOUBLE = 6, TIME = 7, DATE = 8, DATETIME = 9,
             TIMESTAMP = 10, CHAR = 11, VARCHAR = 12 }
sql.error = { NONE = 0, IGNORABLE = 1, FATAL = 2 }
local T = sql.type

-- rqps's statement path: C functions called as sysbench calls its driver's.
ffi.cdef(raw.sql_cdef)

-- An error descriptor's `connection`: sysbench's is the connection's C
-- object, which prints (and `inspect` shows) as <sql_connection>. This one is
-- a C object too, made for the descriptor: it reads and calls the Lua
-- connection it stands for, equals it, and keeps it alive while it lives.
ffi.cdef("typedef struct { int32_t slot; } rqps_sb_conref;")
local conrefs, conref_free, conref_calls, conref_slots = {}, {}, {}, 0
local function conref_of(r)
   if ffi.istype("rqps_sb_conref", r) then
      return conrefs[r.slot]
   end
   return r
end
local function conref_release(r)
   conrefs[r.slot] = nil
   conref_free[#conref_free + 1] = r.slot
end
ffi.metatype("rqps_sb_conref", {
   __tostring = function() return "<sql_connection>" end,
   __eq = function(a, b) return conref_of(a) == conref_of(b) end,
   __index = function(r, k)
      local con = conrefs[r.slot]
      local v = con[k]
      if type(v) ~= "function" then
         return v
      end
      -- con:method(...) through the descriptor: the method called on con
      local call = conref_calls[v]
      if call == nil then
         call = function(self, ...) return v(conref_of(self), ...) end
         conref_calls[v] = call
      end
      return call
   end,
   __newindex = function(r, k, v) conrefs[r.slot][k] = v end,
})
local function conref(con)
   local slot = table.remove(conref_free)
   if slot == nil then
      conref_slots = conref_slots + 1
      slot = conref_slots
   end
   conrefs[slot] = con
   return ffi.gc(ffi.new("rqps_sb_conref", slot), conref_release)
end

-- Raises what sysbench raises for a failed statement: a table with
-- errcode RESTART_EVENT when the error is ignorable (by the ignore list or
-- the sql_error_ignorable hook), else a message; `level` as error()'s.
local function fail(con, query, level)
   local _, errno, state, msg, ignorable = con.raw:last_error()
   if con.ptr == nil then
      -- no connection yet (rqps's check of the script): why, plainly
      error(msg, level + 1)
   end
   local errdesc = { connection = conref(con), query = query, sql_errno = errno,
                     sql_state = state, sql_errmsg = msg }
   if ignorable or (type(sysbench.hooks.sql_error_ignorable) == "function"
                    and sysbench.hooks.sql_error_ignorable(errdesc)) then
      errdesc.errcode = sysbench.error.RESTART_EVENT
      error(errdesc, level + 1)
   end
   error(string.format("SQL error, errno = %d, state = '%s': %s",
                       errno, state, msg), level + 1)
end

-- A connection's result is its `rqps_sb_out` struct, as sysbench's is its
-- connection's `sql_result`: the statement path writes nrows, nfields,
-- generation and next into it and returns it, so a statement fills no Lua
-- table. Valid until the connection's next statement.
local Result = {}
-- The connection of each result struct (weak: a connection that is gone
-- takes its struct with it).
local owner = setmetatable({}, { __mode = "kv" })

function Result.fetch_row(self)
   local i = self.next
   self.next = i + 1
   return owner[self].raw:row(self.generation, i)
end

function Result.free(self)
   self.nrows = 0
end

ffi.metatype("rqps_sb_out", { __index = Result,
                              __tostring = function() return "<sql_result>" end })

local Con = {}
Con.__index = Con
Con.__tostring = function() return "<sql_connection>" end

function Con.query(self, query)
   local out = self.out
   if C.rqps_sb_query(self.ptr, query, #query, out) ~= 0 then
      fail(self, query, 2)
   end
   return out
end

function Con.query_row(self, query)
   local rs = self:query(query)
   if rs == nil or rs.nrows == 0 or rs.nfields == 0 then
      return nil
   end
   return unpack(rs:fetch_row(), 1, rs.nfields)
end

function Con.disconnect(self)
   self.raw:disconnect()
end

function Con.reconnect(self)
   local ok, a, b, c, d = self.raw:reconnect()
   if ok == false then
      error(string.format("reconnect failed: %s", c), 2)
   end
end

-- Bulk inserts: rows are gathered up to sysbench's packet size (512 KiB)
-- and sent as one multi-row INSERT.
local BULK_BYTES = 524288

function Con.bulk_insert_init(self, query)
   self.bulk_query = query
   self.bulk_rows = {}
   self.bulk_bytes = #query
end

local function bulk_flush(self)
   if self.bulk_rows ~= nil and #self.bulk_rows > 0 then
      local q = self.bulk_query .. table.concat(self.bulk_rows, ",")
      self.bulk_rows = {}
      self.bulk_bytes = #self.bulk_query
      if C.rqps_sb_query(self.ptr, q, #q, self.out) ~= 0 then
         fail(self, q, 3)
      end
   end
end

function Con.bulk_insert_next(self, row)
   assert(self.bulk_query ~= nil, "bulk_insert_next() without bulk_insert_init()")
   if self.bulk_bytes + #row + 1 > BULK_BYTES then
      bulk_flush(self)
   end
   self.bulk_rows[#self.bulk_rows + 1] = row
   self.bulk_bytes = self.bulk_bytes + #row + 1
end

function Con.bulk_insert_done(self)
   bulk_flush(self)
   self.bulk_query = nil
   self.bulk_rows = nil
end

-- A parameter: its value, and where its statement's C array holds it once
-- bound (`el`, a pointer to its element: kind 0 NULL, 1 integer, 2 text,
-- 3 double). Each kind has its own `set`, so that setting one (once an
-- event, in a compiled trace) tests nothing but nil.
local tonumber = tonumber
local Param = {}
Param.__index = Param
Param.__tostring = function() return "<sql_param>" end

-- Writes the value into the statement's array (the string stays alive
-- as the parameter's value).
local function push(self)
   local e, v = self.el, self.value
   if e == nil then
      return
   end
   if v == nil then
      e.kind = 0
   elseif self.kind == "int" then
      e.kind = 1
      e.i = v
   elseif self.kind == "double" then
      e.kind = 3
      e.d = v
   else
      e.kind = 2
      e.s = v
      e.len = #v
   end
end

local IntParam = setmetatable({}, { __index = Param })
IntParam.__index = IntParam
IntParam.__tostring = Param.__tostring
function IntParam.set(self, v)
   if v == nil then
      self.value = nil
      return push(self)
   end
   v = tonumber(v) or 0
   self.value = v
   local e = self.el
   if e ~= nil then
      e.kind = 1
      e.i = v
   end
end

local DoubleParam = setmetatable({}, { __index = Param })
DoubleParam.__index = DoubleParam
DoubleParam.__tostring = Param.__tostring
function DoubleParam.set(self, v)
   if v ~= nil then
      v = tonumber(v) or 0
   end
   self.value = v
   push(self)
end

function Param.set(self, v)
   if v ~= nil then
      v = tostring(v)
      if #v > self.max_len then
         v = string.sub(v, 1, self.max_len)
      end
   end
   self.value = v
   push(self)
end

function Param.set_rand_str(self, fmt)
   if self.kind ~= "text" then
      error("Unsupported argument type: " .. self.type, 2)
   end
   local v = sysbench.rand.string(fmt)
   if #v > self.max_len then
      v = string.sub(v, 1, self.max_len)
   end
   self.value = v
   push(self)
end

local Stmt = {}
Stmt.__index = Stmt
Stmt.__tostring = function() return "<sql_statement>" end

function Stmt.bind_create(self, btype, max_len)
   local p = { type = btype }
   if btype == T.TINYINT or btype == T.SMALLINT or btype == T.INT
      or btype == T.BIGINT then
      p.kind, p.max_len = "int", 8
      setmetatable(p, IntParam)
   elseif btype == T.FLOAT or btype == T.DOUBLE then
      p.kind, p.max_len = "double", 8
      setmetatable(p, DoubleParam)
   elseif btype == T.CHAR or btype == T.VARCHAR then
      p.kind, p.max_len = "text", max_len or 0
      setmetatable(p, Param)
   else
      error("Unsupported argument type: " .. tostring(btype), 2)
   end
   return p
end

function Stmt.bind_param(self, ...)
   local n = select("#", ...)
   if n < 1 then
      return nil
   end
   self.params = { ... }
   self.n = n
   self.arr = ffi.new("rqps_sb_param[?]", n)
   for i = 1, n do
      local p = self.params[i]
      -- `arr` keeps the array alive for `el` (a later bind_param of the
      -- statement makes a new one)
      p.arr, p.el = self.arr, self.arr + (i - 1)
      push(p)
   end
   return 0
end

function Stmt.execute(self)
   local out = self.out
   if C.rqps_sb_execute(self.ptr, self.id, self.n, self.arr, out) ~= 0 then
      fail(self.con, "<prepared statement>", 2)
   end
   return out
end

function Stmt.close(self)
   self.params = nil
end

function Con.prepare(self, query)
   local ok, a = self.raw:prepare(query)
   if ok == false then
      fail(self, query, 2)
   end
   return setmetatable({ con = self, ptr = self.ptr, out = self.out, id = a, n = 0 }, Stmt)
end

local Driver = {}
Driver.__index = Driver
Driver.__tostring = function() return "<sql_driver>" end

function Driver.name(self)
   return self.sname
end

function Driver.connect(self)
   local r, errno, state, msg = raw.connect()
   if r == false then
      error(string.format("connection creation failed: %s", msg), 2)
   end
   local con = setmetatable({ raw = r, ptr = ffi.cast("void *", r:ptr()),
                              out = ffi.new("rqps_sb_out") }, Con)
   owner[con.out] = con
   return con
end

-- sysbench 1.0's drivers. A name not among them is refused as sysbench
-- refuses it: a FATAL line (shown from --verbosity=1), then the Lua error.
local DRIVERS = { mysql = true, pgsql = true }

function sql.driver(name)
   local sname = raw.driver_name()
   if name ~= nil and not DRIVERS[name] then
      local opt = sysbench.opt
      if (opt and tonumber(opt.verbosity) or 3) >= 1 then
         io.write(string.format("FATAL: invalid database driver name: '%s'\n",
                                tostring(name)))
      end
      error("failed to initialize the DB driver", 2)
   end
   -- (An empty name: the script is being checked, before the engine is known.)
   if name ~= nil and sname ~= "" and name ~= sname then
      error(string.format("rqps reaches this engine with the %s driver, not %s",
                          sname, tostring(name)), 2)
   end
   return setmetatable({ sname = sname }, Driver)
end

---------------------------------------------------------------------------
-- What sysbench 1.0 offers and rqps does not: using one raises an error that
-- names it (rqps also refuses scripts that mention them before the run).

local function missing(prefix, t)
   return setmetatable(t or {}, { __index = function(_, k)
      error(string.format("%s.%s is not supported by rqps (docs/suites/sysbench.md lists the Lua API)",
                          prefix, tostring(k)), 2)
   end })
end
sysbench.db = missing("sysbench.db")
missing("sysbench.rand", sysbench.rand)
missing("sysbench.sql", sql)

-- One event as the runner asks for it: 0, or 1 when the event asked to
-- end the thread; 2 for an ignorable (restart) failure, its error kept in
-- __rqps_err for the runner and before_restart_event; 3 for any other
-- error, its message in __rqps_err.
local pcall, type, tostring = pcall, type, tostring
local tid = sysbench.tid
local RESTART = sysbench.error.RESTART_EVENT
function __rqps_event()
   local ok, ret = pcall(event, tid)
   if ok then
      if ret then
         return 1
      end
      return 0
   end
   if type(ret) == "table" and ret.errcode == RESTART then
      __rqps_err = ret
      return 2
   end
   __rqps_err = tostring(ret)
   return 3
end

function __rqps_restart()
   local e = __rqps_err
   __rqps_err = nil
   if type(e) == "table" and sysbench.hooks.before_restart_event then
      sysbench.hooks.before_restart_event(e)
   end
end
