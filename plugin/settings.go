package plugin

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// Settings are the plugin's settings, the map under
// linters.settings.custom.avcheck.settings in .golangci.yml. golangci-lint
// lowercases every key (its configuration goes through viper), so the keys
// are lowercase, in golangci-lint's kebab-case.
type Settings struct {
	// Enable, when not empty, runs only the named analyzers.
	Enable []string `json:"enable"`
	// Disable leaves out the named analyzers.
	Disable []string `json:"disable"`
	// MaxD sets regions' -maxd: how many source lines apart two accesses
	// may be and still form one proximity region.
	MaxD *int `json:"maxd"`
	// GuardedbyThreshold sets guardedby's -threshold: the share of a
	// field's accesses that must hold a mutex for it to be its guard.
	GuardedbyThreshold *float64 `json:"guardedby-threshold"`
	// Report sets avreport's -report: the dynamic report whose findings
	// are shown with the static ones.
	Report *string `json:"report"`
}

// settingNames lists the keys of Settings, in the order the errors name
// them.
var settingNames = func() []string {
	t := reflect.TypeFor[Settings]()
	names := make([]string, t.NumField())
	for i := range names {
		names[i], _, _ = strings.Cut(t.Field(i).Tag.Get("json"), ",")
	}
	return names
}()

// The keys under which New records the dynamic report's content hash and
// the binary's own hash in golangci-lint's copy of the settings (see New).
// They are not settings: DecodeSettings drops them.
const (
	reportHashKey = "report-sha256"
	binaryHashKey = "binary-sha256"
)

// DecodeSettings decodes golangci-lint's raw settings strictly: an unknown
// key, a value of the wrong type or out of range is an error that names
// the setting. A nil conf (no settings) gives the zero Settings.
func DecodeSettings(conf any) (Settings, error) {
	var s Settings
	if conf == nil {
		return s, nil
	}
	raw, err := json.Marshal(conf)
	if err != nil {
		return s, fmt.Errorf("avcheck: settings: %w", err)
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(raw, &keys); err != nil {
		return s, fmt.Errorf("avcheck: settings: want a map of settings (%s), got %s", strings.Join(settingNames, ", "), jsonKind(raw))
	}
	delete(keys, reportHashKey)
	delete(keys, binaryHashKey)
	var unknown []string
	for k := range keys {
		if !slices.Contains(settingNames, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		what := "setting"
		if len(unknown) > 1 {
			what = "settings"
		}
		return s, fmt.Errorf("avcheck: unknown %s %s (known: %s)", what, quoteAll(unknown), strings.Join(settingNames, ", "))
	}
	// Decode in a fixed order, so that a configuration with several
	// mistakes always reports the same one first.
	for _, name := range settingNames {
		v, ok := keys[name]
		if !ok {
			continue
		}
		if err := decodeField(&s, name, v); err != nil {
			return Settings{}, err
		}
	}
	if s.MaxD != nil && *s.MaxD < 0 {
		return Settings{}, fmt.Errorf("avcheck: setting \"maxd\" must be 0 or more, got %d", *s.MaxD)
	}
	if t := s.GuardedbyThreshold; t != nil && (*t < 0 || *t > 1) {
		return Settings{}, fmt.Errorf("avcheck: setting \"guardedby-threshold\" must be between 0 and 1, got %v", *t)
	}
	if s.Report != nil && *s.Report == "" {
		return Settings{}, errors.New("avcheck: setting \"report\" must be a file path, got an empty string")
	}
	return s, nil
}

// decodeField decodes one setting's value into s, by decoding the object
// {name: v} with unknown fields disallowed.
func decodeField(s *Settings, name string, v json.RawMessage) error {
	one, err := json.Marshal(map[string]json.RawMessage{name: v})
	if err != nil {
		return fmt.Errorf("avcheck: setting %q: %w", name, err)
	}
	dec := json.NewDecoder(bytes.NewReader(one))
	dec.DisallowUnknownFields()
	err = dec.Decode(s)
	if err == nil {
		return nil
	}
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		return fmt.Errorf("avcheck: setting %q must be %s, got %s", name, describeSetting(name), jsonKind(v))
	}
	return fmt.Errorf("avcheck: setting %q: %w", name, err)
}

// describeSetting says in words what type of value a setting wants.
func describeSetting(name string) string {
	t := reflect.TypeFor[Settings]().Field(slices.Index(settingNames, name)).Type
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Int:
		return "an integer"
	case reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Slice:
		return "a list of analyzer names"
	}
	return t.String()
}

// jsonKind says what a JSON value is, with the value itself when it is
// short.
func jsonKind(v json.RawMessage) string {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return "nothing"
	}
	switch v[0] {
	case '{':
		return "a map"
	case '[':
		return "a list"
	case '"':
		return "the string " + string(v)
	case 't', 'f':
		return "the boolean " + string(v)
	case 'n':
		return "null"
	}
	return "the number " + string(v)
}

func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}
