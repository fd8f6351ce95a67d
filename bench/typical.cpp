// A typical competitive-programming solution (issue 24's compile benchmark): bits/stdc++.h,
// containers, sorting, a map, fast I/O.
#include <bits/stdc++.h>
using namespace std;
using ll = long long;

int main() {
    ios::sync_with_stdio(false);
    cin.tie(nullptr);
    int n;
    if (!(cin >> n)) return 0;
    vector<ll> values(n);
    for (auto &value : values) cin >> value;
    sort(values.begin(), values.end());
    map<ll, int> counts;
    for (ll value : values) counts[value]++;
    priority_queue<pair<int, ll>> heap;
    for (auto [value, count] : counts) heap.push({count, value});
    ll answer = accumulate(values.begin(), values.end(), 0LL);
    while (!heap.empty() && heap.top().first > 1) {
        answer -= heap.top().second;
        heap.pop();
    }
    set<ll> distinct(values.begin(), values.end());
    cout << answer << ' ' << distinct.size() << '\n';
    return 0;
}
